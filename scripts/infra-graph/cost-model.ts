/**
 * The monthly bill of a stage, item by item, from its resource graph (scripts/infra-graph/sst-globals.ts records what
 * sst.config.ts declares, with the children the SST components create) and the list prices of infra/prices.ts.
 * Two figures: the stage at idle (nothing scheduled: what it costs to exist), and what one million short-lane
 * executions of 200 ms add. `npm run cost` prints both; test/infra/cost.test.ts holds them under the targets.
 *
 * What the graph cannot say is a stated assumption (WORKLOAD), and what the runtime writes (CloudWatch metrics and
 * log lines) is measured by running the code that writes it.
 */
import { publishQueueMetrics } from '../../functions/queue-metrics';
import { transitionRecord } from '../../functions/logger';
import { createEmfWriter } from '../../functions/emf';
import { LANES, type Transition } from '@jobs/core';
import { HOURS_PER_MONTH, PRICES } from '../../infra/prices';
import { resolve, type Recorded, type ResourceGraph } from './sst-globals';

/**
 * Every kind of resource the graph may hold: priced by costModel(), or free, with the reason. A kind in neither fails
 * the cost test, so a change that adds a resource has to say what it costs.
 */
const PRICED_KINDS = [
  'aws.rds.Instance',
  'aws.rds.Proxy',
  'aws.secretsmanager.Secret',
  'aws.elasticache.ReplicationGroup',
  'aws.ec2.Instance',
  'aws.ec2.NatGateway',
  'aws.servicediscovery.PrivateDnsNamespace',
  'aws.ecs.Service',
  'aws.ecs.TaskDefinition',
  'sst.aws.Service',
  'sst.aws.Cron',
  'aws.cloudwatch.MetricAlarm',
  'aws.appautoscaling.Policy',
] as const;

const FREE_KINDS: Record<string, string> = {
  'sst.aws.Function':
    'billed per use: the tick through its schedule, the worker per execution, the API per request, Migrate once a deploy',
  'sst.aws.Vpc':
    'VPC, subnets, route tables, internet gateway and security groups cost nothing (NAT and Cloud Map: priced)',
  'aws.ec2.SecurityGroup': 'no charge',
  'aws.ec2.getAmi': 'a lookup at deploy time',
  'sst.aws.Postgres': 'priced as the instance (and proxy) it creates',
  'sst.aws.Redis': 'priced as the replication group it creates',
  'aws.elasticache.ParameterGroup': 'no charge',
  'sst.aws.Bus': 'a custom bus costs nothing; events are priced per million',
  'sst.aws.Bus.subscribe': 'rules cost nothing; matched events are the events already priced',
  'sst.aws.ApiGatewayV2': 'HTTP API: $1 per million requests, nothing at idle',
  'sst.aws.ApiGatewayV2.route': 'part of the HTTP API',
  'aws.apigatewayv2.Stage': 'part of the HTTP API',
  'sst.aws.Cluster': 'an ECS cluster costs nothing; its tasks are priced',
  'sst.Secret': 'kept by SST in its state, no AWS secret',
  'sst.Linkable': 'values carried in the linked functions, no AWS resource',
  'aws.ssm.Parameter': 'standard parameters cost nothing',
  'aws.lambda.Invocation': 'one invocation a deploy',
  'aws.sns.Topic': 'the alarms publish a few notifications a month (first million free)',
  'sst.x.DevCommand': 'only in `sst dev`',
};

/** Kinds in the graph that are neither priced nor known to be free. */
export function unpricedKinds(graph: ResourceGraph): string[] {
  const known = new Set<string>([...PRICED_KINDS, ...Object.keys(FREE_KINDS)]);
  return [...new Set(graph.recorded.map((r) => r.kind))].filter((kind) => !known.has(kind)).sort();
}

/** What the graph does not say. */
const WORKLOAD = {
  /** Billed duration of a tick with nothing to do (its passes are a handful of indexed queries). */
  idleTickSeconds: 0.3,
  /** START, END and REPORT lines Lambda writes for every invocation, bytes. */
  platformLogBytesPerInvocation: 350,
  /** CloudWatch Logs counts 26 bytes of metadata per log event. */
  logEventOverheadBytes: 26,
  /** The short-lane execution priced per million. */
  shortExecutionSeconds: 0.2,
  /** What the worker adds per attempt: claim, start and outcome statements (the drain benchmark: about 1 ms). */
  perAttemptOverheadSeconds: 0.01,
  /** Bytes between the worker and PostgreSQL/Redis per attempt, half of it crossing zones. */
  bytesPerAttempt: 8_000,
  crossAzShare: 0.5,
  /** The container image in ECR, GB. */
  imageGb: 0.3,
  /** Days CloudWatch keeps the logs (SST's default for a Function: one month). */
  logRetentionMonths: 1,
} as const;

interface CostItem {
  /** What is billed, in words. */
  item: string;
  /** How the figure comes about: quantity x price. */
  basis: string;
  monthly: number;
}

export interface CostModel {
  stage: string;
  idle: CostItem[];
  perMillion: CostItem[];
  idleTotal: number;
  perMillionTotal: number;
}

const dollars = (n: number) => `$${n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)}`;
/** A unit price with its significant digits. */
const price = (n: number) => `$${Number(n.toPrecision(4))}`;
const sum = (items: CostItem[]) => items.reduce((total, i) => total + i.monthly, 0);
/** Minutes in a month. */
const MINUTES = HOURS_PER_MONTH * 60;

function memoryGb(fn: Recorded): number {
  const memory = String(resolve(fn.args.memory) ?? '1024 MB');
  const match = /^(\d+(?:\.\d+)?)\s*(MB|GB)$/.exec(memory);
  if (!match) throw new Error(`${fn.name}: memory "${memory}" is not "<n> MB" or "<n> GB"`);
  return match[2] === 'GB' ? Number(match[1]) : Number(match[1]) / 1024;
}

function priceOf(table: Record<string, number>, key: string, what: string): number {
  const price = table[key];
  if (price === undefined) throw new Error(`infra/prices.ts has no ${what} price for ${key}`);
  return price;
}

/** Invocations a month of an EventBridge schedule expression `rate(n minute[s]|hour[s])`. */
function invocationsPerMonth(schedule: string): number {
  const match = /^rate\((\d+) (minute|minutes|hour|hours)\)$/.exec(schedule);
  if (!match) throw new Error(`cannot price the schedule "${schedule}"`);
  const minutes = Number(match[1]) * (match[2]!.startsWith('hour') ? 60 : 1);
  return MINUTES / minutes;
}

/** The EMF lines one tick writes: how many distinct metrics CloudWatch bills, and their bytes. */
export async function tickMetrics(): Promise<{ metrics: number; bytesPerTick: number; lines: number }> {
  const distinct = new Set<string>();
  let bytes = 0;
  let lines = 0;
  const writer = createEmfWriter({
    namespace: 'jobs-scheduler/production',
    write: (line) => {
      bytes += Buffer.byteLength(line);
      lines++;
      const doc = JSON.parse(line) as {
        _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] };
      } & Record<string, unknown>;
      for (const directive of doc._aws.CloudWatchMetrics) {
        const dims = directive.Dimensions.flat()
          .map((d) => `${d}=${String(doc[d])}`)
          .join(',');
        for (const metric of directive.Metrics) distinct.add(`${metric.Name}{${dims}}`);
      }
    },
  });
  const idleLane = { waiting: 0, running: 0, oldestWaitingAgeMs: null };
  await publishQueueMetrics(
    {
      store: {
        executionsLoadByLane: async () => Object.fromEntries(LANES.map((l) => [l, idleLane])),
        workerListActive: async () => [],
      },
      queue: { depth: async () => Object.fromEntries(LANES.map((l) => [l, { dead: 0 }])) as never },
    },
    writer,
    { workerActiveWithinMs: 60_000, folded: null, stepErrors: 0 },
  );
  return { metrics: distinct.size, bytesPerTick: bytes, lines };
}

/** The log lines of one successful short-lane execution: its transitions (the tick's queued, the worker's two). */
function transitionLogBytes(): { lines: number; bytes: number } {
  const base = {
    event: 'execution.transition' as const,
    jobId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    executionId: '123456789012',
    attempt: 1,
    at: new Date('2026-12-02T12:00:00.000Z'),
  };
  const worker = 'lambda-2f1c6a0e9b3d4c57';
  const transitions: Transition[] = [
    { ...base, from: null, to: 'queued', workerId: null, trigger: 'cron' },
    { ...base, from: 'queued', to: 'running', workerId: worker },
    { ...base, from: 'running', to: 'succeeded', workerId: worker, durationMs: 200 },
  ];
  const head = `{"level":"info","time":"2026-12-02T12:00:00.000Z",`;
  const bytes = transitions.reduce(
    (total, t) => total + Buffer.byteLength(`${head}${JSON.stringify(transitionRecord(t)).slice(1)}\n`),
    0,
  );
  return { lines: transitions.length, bytes };
}

function environmentOf(fn: Recorded): Record<string, string> {
  return (resolve(fn.args.environment) ?? {}) as Record<string, string>;
}

/** Alarm metrics CloudWatch bills for one alarm: one per metric it reads (metric math: each `metric` query). */
function alarmMetrics(alarm: Recorded): number {
  const queries = resolve(alarm.args.metricQueries) as { metric?: unknown }[] | undefined;
  return queries ? queries.filter((q) => q.metric).length : 1;
}

/**
 * The monthly cost of the evaluated stage. `graph` must come from a deploy (not `sst dev`) evaluation.
 * @example const model = await costModel(graph, 'production'); model.idleTotal
 */
export async function costModel(graph: ResourceGraph, stage: string): Promise<CostModel> {
  const idle: CostItem[] = [];
  const perMillion: CostItem[] = [];
  const hourly = (item: string, count: number, rate: number, what: string) =>
    idle.push({
      item,
      basis: `${count} ${what} x ${HOURS_PER_MONTH} h x ${price(rate)}/h`,
      monthly: count * rate * HOURS_PER_MONTH,
    });

  // PostgreSQL.
  for (const db of graph.all('aws.rds.Instance')) {
    const cls = String(resolve(db.args.instanceClass));
    const copies = resolve(db.args.multiAz) ? 2 : 1;
    const zones = copies === 2 ? 'Multi-AZ (primary + standby)' : 'single-AZ';
    hourly(`RDS ${cls}, ${zones}`, copies, priceOf(PRICES.rdsInstanceHour, cls, 'RDS instance'), 'instance');
    const gb = Number(resolve(db.args.allocatedStorage));
    idle.push({
      item: `RDS storage gp3, ${gb} GB allocated (grows up to ${String(resolve(db.args.maxAllocatedStorage))} GB)`,
      basis: `${gb} GB x ${copies} x ${dollars(PRICES.rdsGp3GbMonth)}/GB-month; backups up to that size free`,
      monthly: gb * copies * PRICES.rdsGp3GbMonth,
    });
  }
  for (const proxy of graph.all('aws.rds.Proxy')) {
    const cls = String(resolve(proxy.args.instanceClass));
    const vcpus = Math.max(PRICES.rdsProxyMinVcpus, priceOf(PRICES.rdsVcpus, cls, 'vCPU count'));
    hourly(`RDS Proxy (${vcpus} vCPUs of ${cls})`, vcpus, PRICES.rdsProxyVcpuHour, 'vCPU');
  }
  for (const secret of graph.all('aws.secretsmanager.Secret')) {
    idle.push({ item: `Secrets Manager secret ${secret.name}`, basis: '1 secret', monthly: PRICES.secretMonth });
  }

  // Redis.
  for (const group of graph.all('aws.elasticache.ReplicationGroup')) {
    const engine = String(resolve(group.args.engine));
    const type = String(resolve(group.args.nodeType));
    const shards = Number(resolve(group.args.numNodeGroups) ?? 1);
    const nodes = shards * (1 + Number(resolve(group.args.replicasPerNodeGroup) ?? 0));
    const table = PRICES.elasticacheNodeHour[engine];
    if (!table) throw new Error(`infra/prices.ts has no ElastiCache prices for ${engine}`);
    hourly(`ElastiCache ${engine} ${type}, ${nodes} node(s)`, nodes, priceOf(table, type, 'ElastiCache node'), 'node');
  }

  // Network: NAT instances (each with a root volume and a public IPv4 address) and Cloud Map's hosted zone.
  const nats = graph.all('aws.ec2.Instance');
  for (const type of new Set(nats.map((n) => String(resolve(n.args.instanceType))))) {
    const count = nats.filter((n) => String(resolve(n.args.instanceType)) === type).length;
    hourly(
      `NAT instance ${type} (fck-nat), one per zone`,
      count,
      priceOf(PRICES.ec2InstanceHour, type, 'EC2'),
      'instance',
    );
  }
  if (nats.length > 0) {
    hourly('Public IPv4 address of each NAT instance', nats.length, PRICES.publicIpv4Hour, 'address');
    idle.push({
      item: 'NAT instances’ root volumes (gp3)',
      basis: `${nats.length} x ${PRICES.natRootVolumeGb} GB x ${dollars(PRICES.ebsGp3GbMonth)}/GB-month`,
      monthly: nats.length * PRICES.natRootVolumeGb * PRICES.ebsGp3GbMonth,
    });
  }
  for (const gateway of graph.all('aws.ec2.NatGateway')) {
    hourly(`NAT gateway ${gateway.name}`, 1, PRICES.natGatewayHour, 'gateway');
    hourly(`Public IPv4 address of NAT gateway ${gateway.name}`, 1, PRICES.publicIpv4Hour, 'address');
  }
  for (const zone of graph.all('aws.servicediscovery.PrivateDnsNamespace')) {
    idle.push({
      item: `Cloud Map namespace ${zone.name} (a private hosted zone)`,
      basis: '1 zone',
      monthly: PRICES.route53HostedZoneMonth,
    });
  }

  // Containers: the task size at the service's minimum count, and the image.
  for (const service of graph.all('aws.ecs.Service')) {
    const task = graph
      .all('aws.ecs.TaskDefinition')
      .find((t) => `${t.name.replace(/Task$/, '')}Service` === service.name);
    if (!task) throw new Error(`no task definition for ${service.name}`);
    const arch = (resolve(task.args.runtimePlatform) as { cpuArchitecture: string }).cpuArchitecture;
    if (arch !== 'ARM64') throw new Error(`${service.name}: only ARM64 Fargate is priced (got ${arch})`);
    const vcpu = Number(/^([\d.]+)/.exec(String(resolve(task.args.cpu)))![1]);
    const gb = Number(/^([\d.]+)/.exec(String(resolve(task.args.memory)))![1]);
    const tasks = Number(resolve(service.args.desiredCount));
    const perHour = vcpu * PRICES.fargateArmVcpuHour + gb * PRICES.fargateArmGbHour;
    idle.push({
      item: `Fargate ${service.name}: ${tasks} task(s) of ${vcpu} vCPU / ${gb} GB, arm64`,
      basis: `${tasks} x ${HOURS_PER_MONTH} h x (${vcpu} x ${price(PRICES.fargateArmVcpuHour)} + ${gb} x ${price(PRICES.fargateArmGbHour)})/h`,
      monthly: tasks * perHour * HOURS_PER_MONTH,
    });
  }
  const images = graph.all('sst.aws.Service').filter((s) => s.args.image);
  if (images.length > 0) {
    idle.push({
      item: 'ECR: the container image',
      basis: `${images.length} x ${WORKLOAD.imageGb} GB x ${price(PRICES.ecrGbMonth)}/GB-month`,
      monthly: images.length * WORKLOAD.imageGb * PRICES.ecrGbMonth,
    });
  }

  // Lambda: only the scheduled tick runs at idle (the worker is woken for work beyond the containers' slots).
  const crons = graph.all('sst.aws.Cron');
  const metrics = await tickMetrics();
  for (const cron of crons) {
    const fn = cron.args.function as { logicalName?: string } | undefined;
    const tick = graph.all('sst.aws.Function').find((f) => f.instance === fn);
    if (!tick) throw new Error(`${cron.name}: its function is not in the graph`);
    const runs = invocationsPerMonth(String(resolve(cron.args.schedule)));
    const gb = memoryGb(tick);
    idle.push({
      item: `Lambda ${tick.name}: ${Math.round(runs).toLocaleString('en-US')} runs (${String(resolve(cron.args.schedule))}), ${gb * 1024} MB`,
      basis: `${Math.round(runs)} x (${WORKLOAD.idleTickSeconds} s x ${gb} GB x ${price(PRICES.lambdaArmGbSecond)}/GB-s + ${PRICES.lambdaRequest * 1e6}/million)`,
      monthly: runs * (WORKLOAD.idleTickSeconds * gb * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest),
    });
    idle.push({
      item: `Schedule ${cron.name} (an EventBridge scheduled rule)`,
      basis: 'scheduled rules are free',
      monthly: runs * PRICES.eventBridgeScheduledRule,
    });
    if (environmentOf(tick).METRICS_NAMESPACE) {
      idle.push({
        item: `CloudWatch custom metrics the tick writes (${metrics.metrics}, as EMF)`,
        basis: `${metrics.metrics} x ${price(PRICES.cloudwatchMetricMonth)}/metric-month`,
        monthly: metrics.metrics * PRICES.cloudwatchMetricMonth,
      });
    }
    const gbLogged =
      (runs *
        (WORKLOAD.platformLogBytesPerInvocation +
          (environmentOf(tick).METRICS_NAMESPACE ? metrics.bytesPerTick : 0) +
          metrics.lines * WORKLOAD.logEventOverheadBytes)) /
      1e9;
    idle.push({
      item: `CloudWatch Logs of ${tick.name} (platform lines${environmentOf(tick).METRICS_NAMESPACE ? ` and ${metrics.lines} EMF lines` : ''} a run)`,
      basis: `${gbLogged.toFixed(3)} GB x (${price(PRICES.cloudwatchLogsIngestGb)} ingested + ${price(PRICES.cloudwatchLogsStoreGbMonth)} kept)`,
      monthly:
        gbLogged * (PRICES.cloudwatchLogsIngestGb + PRICES.cloudwatchLogsStoreGbMonth * WORKLOAD.logRetentionMonths),
    });
  }

  // Alarms: billed per metric each reads; target tracking adds a high and a low alarm on its metrics.
  const alarms = graph.all('aws.cloudwatch.MetricAlarm');
  const alarmMetricCount = alarms.reduce((n, a) => n + alarmMetrics(a), 0);
  let trackingMetricCount = 0;
  for (const policy of graph.all('aws.appautoscaling.Policy')) {
    const spec = resolve(policy.args.targetTrackingScalingPolicyConfiguration) as
      { customizedMetricSpecification?: { metrics?: { metricStat?: unknown }[] } } | undefined;
    if (!spec) continue;
    const read = spec.customizedMetricSpecification?.metrics?.filter((m) => m.metricStat).length ?? 1;
    trackingMetricCount += 2 * read;
  }
  idle.push({
    item: `CloudWatch alarms: ${alarms.length} declared + 2 per target-tracking policy`,
    basis: `${alarmMetricCount + trackingMetricCount} alarm metrics x ${price(PRICES.cloudwatchAlarmMetricMonth)}`,
    monthly: (alarmMetricCount + trackingMetricCount) * PRICES.cloudwatchAlarmMetricMonth,
  });

  // One million short-lane executions of 200 ms, run by woken worker Lambdas (the always-on containers' spare slots
  // would run them for nothing extra; this is the case where they are busy).
  const worker = graph.one('sst.aws.Function', 'Worker');
  const workerGb = memoryGb(worker);
  const concurrency = Number(environmentOf(worker).WORKER_CONCURRENCY);
  const attemptSeconds = WORKLOAD.shortExecutionSeconds + WORKLOAD.perAttemptOverheadSeconds;
  perMillion.push({
    item: `Lambda Worker compute, ${workerGb * 1024} MB, ${concurrency} attempts at once`,
    basis: `1e6 x ${Number(attemptSeconds.toFixed(3))} s / ${concurrency} x ${workerGb} GB x ${price(PRICES.lambdaArmGbSecond)}/GB-s (woken one per ${concurrency} ids waiting)`,
    monthly: (1e6 * attemptSeconds * workerGb * PRICES.lambdaArmGbSecond) / concurrency,
  });
  // A woken Lambda claims for up to 240 s; at least one invocation (and one work-available event) per that many.
  const perInvocation = Math.max(concurrency, Math.floor((240 / attemptSeconds) * concurrency));
  const invocations = Math.ceil(1e6 / perInvocation);
  perMillion.push({
    item: 'Lambda Worker invocations and their work-available events',
    basis: `${invocations} x (${PRICES.lambdaRequest * 1e6}/million requests + ${PRICES.eventBridgeEvent * 1e6}/million events)`,
    monthly: invocations * (PRICES.lambdaRequest + PRICES.eventBridgeEvent),
  });
  const published = (environmentOf(worker).EVENT_TRANSITIONS ?? 'all').split(',').map((s) => s.trim());
  const eventsPerExecution = published.includes('all')
    ? 3
    : ['queued', 'running', 'succeeded'].filter((s) => published.includes(s)).length;
  perMillion.push({
    item: `EventBridge transition events (EVENT_TRANSITIONS=${published.join(',')})`,
    basis: `1e6 x ${eventsPerExecution} events of a successful execution x ${PRICES.eventBridgeEvent * 1e6}/million`,
    monthly: 1e6 * eventsPerExecution * PRICES.eventBridgeEvent,
  });
  const logged = transitionLogBytes();
  const logGb = (1e6 * (logged.bytes + logged.lines * WORKLOAD.logEventOverheadBytes)) / 1e9;
  perMillion.push({
    item: `CloudWatch Logs: ${logged.lines} transition lines an execution`,
    basis: `${logGb.toFixed(2)} GB x (${price(PRICES.cloudwatchLogsIngestGb)} ingested + ${price(PRICES.cloudwatchLogsStoreGbMonth)} kept)`,
    monthly: logGb * (PRICES.cloudwatchLogsIngestGb + PRICES.cloudwatchLogsStoreGbMonth * WORKLOAD.logRetentionMonths),
  });
  const crossGb = (1e6 * WORKLOAD.bytesPerAttempt * WORKLOAD.crossAzShare) / 1e9;
  perMillion.push({
    item: 'Traffic between zones (worker to PostgreSQL/Redis)',
    basis: `${crossGb.toFixed(1)} GB x 2 directions x ${price(PRICES.crossAzGb)}/GB`,
    monthly: crossGb * 2 * PRICES.crossAzGb,
  });

  return { stage, idle, perMillion, idleTotal: sum(idle), perMillionTotal: sum(perMillion) };
}

/** The model as the text `npm run cost` prints. */
export function formatCostModel(model: CostModel, meta: { asOf: string; region: string }): string {
  const table = (items: CostItem[]) => {
    const width = Math.max(...items.map((i) => i.item.length));
    return items.map((i) => `  ${i.item.padEnd(width)}  ${dollars(i.monthly).padStart(8)}   ${i.basis}`).join('\n');
  };
  return [
    `Stage "${model.stage}", ${meta.region} list prices of ${meta.asOf} (infra/prices.ts), per month:`,
    '',
    `Idle (nothing scheduled): ${dollars(model.idleTotal)}`,
    table(model.idle),
    '',
    `Per million short-lane executions of ${WORKLOAD.shortExecutionSeconds * 1000} ms: ${dollars(model.perMillionTotal)}`,
    table(model.perMillion),
  ].join('\n');
}
