/**
 * The production settings of the resource graph: reserved concurrency and retries, secrets kept out of every plain
 * environment, timeouts, `wait`, least-privilege permissions, scaling on the tick's queue metrics, and the
 * PostgreSQL connection budget computed from the graph's own values against the instance's limit.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUDGET, MAX_CONNECTIONS, usableConnections, worstCaseConnections } from '../../infra/budget';
import { QUEUE_METRICS } from '../../functions/queue-metrics';
import { graphBudget, transformed } from './graph-budget';
import { plainEnvironment, ssmParameters } from './runtime-env';
import {
  FAKE,
  evaluateSstConfig,
  resolve,
  uninstallSstGlobals,
  type Recorded,
  type ResourceGraph,
} from './sst-globals';

// Production with its queue on Redis, the setting's other value: the Redis-shaped graph (ElastiCache, its replica,
// REDIS_URL, the larger worker reservation) is checked here; the committed production (queue: 'postgres') is checked
// in queue-postgres.test.ts.
vi.mock('../../infra/settings', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../infra/settings')>();
  const stages = {
    ...original.STAGE_SETTINGS,
    production: { ...original.STAGE_SETTINGS.production, queue: 'redis' as const },
  };
  return {
    ...original,
    STAGE_SETTINGS: stages,
    stageSettings: (stage: string) => original.stageSettings(stage, stages),
  };
});

const FUNCTIONS = ['ApiHandler', 'Worker', 'Tick', 'Migrate'] as const;
const PUBLISHERS = ['ApiHandler', 'Worker', 'Tick'] as const;

const scenarios = [
  { title: 'sst dev --stage dev', stage: 'dev', dev: true, production: false },
  { title: 'sst deploy --stage dev', stage: 'dev', dev: false, production: false },
  { title: 'sst deploy --stage production', stage: 'production', dev: false, production: true },
];

describe.each(scenarios)('$title', (scenario) => {
  let graph: ResourceGraph;
  beforeAll(async () => {
    ({ graph } = await evaluateSstConfig(scenario));
  });
  afterAll(uninstallSstGlobals);

  const fn = (name: string) => graph.one('sst.aws.Function', name);
  const service = () => graph.one('sst.aws.Service', 'ContainerWorker');
  const busArn = () => resolve((graph.one('sst.aws.Bus', 'Events').instance as { arn: unknown }).arn);

  it('reserves concurrency for every function: the tick its own slot, the rest as the connection budget says', () => {
    expect(resolve(fn('Tick').args.concurrency)).toEqual({ reserved: 1 });
    expect(resolve(fn('ApiHandler').args.concurrency)).toEqual({ reserved: BUDGET.apiReserved });
    expect(resolve(fn('Worker').args.concurrency)).toEqual({ reserved: BUDGET.workerReserved });
    expect(resolve(fn('Migrate').args.concurrency)).toEqual({ reserved: 1 });
    // Every wake-up of one tick can start a worker.
    expect(Number(plainEnvironment(fn('Tick')).WAKE_MAX_WORKERS)).toBeLessThanOrEqual(BUDGET.workerReserved);
  });

  it('lets Lambda retry nothing asynchronously, and drops stale queued invocations', () => {
    for (const name of ['Tick', 'Worker']) {
      expect(fn(name).args.retries, name).toBe(0);
      expect(
        transformed(fn(name).args.transform?.eventInvokeConfig).maximumEventAgeInSeconds,
        name,
      ).toBeLessThanOrEqual(120);
    }
  });

  it('bundles every function with code splitting, so dynamically imported modules stay out of the init', () => {
    for (const name of FUNCTIONS) expect(resolve(fn(name).args.nodejs), name).toMatchObject({ splitting: true });
  });

  it('sizes the worker Lambda to its work: 512 MB, not the component default of 1024 MB', () => {
    expect(fn('Worker').args.memory).toBe('512 MB');
  });

  it('keeps every secret out of every plain environment', () => {
    const secrets = [
      FAKE.postgres.password,
      FAKE.redis.password,
      encodeURIComponent(FAKE.postgres.password),
      encodeURIComponent(FAKE.redis.password),
    ];
    secrets.push(String(resolve((graph.one('sst.Secret', 'ApiKeys').instance as { value: unknown }).value)));
    const runtimes: Recorded[] = [...FUNCTIONS.map(fn), service(), ...graph.all('sst.x.DevCommand')];
    for (const runtime of runtimes) {
      const vars = plainEnvironment(runtime);
      expect(
        Object.keys(vars).filter((k) => /API_KEYS|PASSWORD|SECRET|TOKEN/.test(k)),
        runtime.name,
      ).toEqual([]);
      for (const [key, value] of Object.entries(vars)) {
        for (const secret of secrets) expect(String(value).includes(secret), `${runtime.name} ${key}`).toBe(false);
        if (/_URL$/.test(key)) expect(new URL(String(value)).password, `${runtime.name} ${key}`).toBe('');
      }
    }
    // The container's passwords reach it only as SSM ARNs in the task definition.
    const ssm = (resolve(service().args.ssm) ?? {}) as Record<string, string>;
    for (const arn of Object.values(ssm)) expect(arn).toMatch(/^arn:aws:aws\.ssm\.Parameter:/);
    if (!scenario.dev)
      expect(Object.keys(ssmParameters(graph, service())).sort()).toEqual([
        'DATABASE_URL',
        'HTTP_SIGNING_SECRET',
        'REDIS_URL',
      ]);
  });

  it('grants PutEvents on the bus to the publishers, the task-protection calls to the container, and nothing to Migrate', () => {
    const putEvents = { actions: ['events:PutEvents'], resources: [busArn()] };
    for (const name of PUBLISHERS) expect(resolve(fn(name).args.permissions), name).toEqual([putEvents]);
    expect(fn('Migrate').args.permissions).toBeUndefined();
    const [publish, protect, ...rest] = resolve(service().args.permissions) as {
      actions: string[];
      resources: string[];
    }[];
    expect(rest).toEqual([]);
    expect(publish).toEqual(putEvents);
    expect(protect!.actions.sort()).toEqual(['ecs:GetTaskProtection', 'ecs:UpdateTaskProtection']);
    expect(protect!.resources).toEqual([`arn:aws:ecs:*:*:task/jobs-scheduler-${scenario.stage}-Cluster/*`]);
    // Linking the bus would add events:* (DeleteEventBus included) to whatever links it.
    const bus = graph.one('sst.aws.Bus', 'Events').instance;
    for (const runtime of [...FUNCTIONS.map(fn), service()])
      expect(((runtime.args.link ?? []) as unknown[]).includes(bus), runtime.name).toBe(false);
  });

  it('makes production deploys wait for a stable container service', () => {
    expect(service().args.wait).toBe(scenario.production);
  });

  it('sends statements unnamed where RDS Proxy sits in front, named elsewhere', () => {
    const proxy = resolve(graph.one('sst.aws.Postgres', 'Database').args.proxy) === true;
    // Off by default (infra/settings.ts says why).
    expect(proxy).toBe(false);
    for (const runtime of [...PUBLISHERS.map(fn), service()]) {
      expect(plainEnvironment(runtime).DATABASE_PREPARED_STATEMENTS, runtime.name).toBe(proxy ? 'unnamed' : 'named');
    }
  });

  it('keeps the worst-case PostgreSQL connection count, from the graph, within the instance limit', () => {
    const instance = String(resolve(graph.one('sst.aws.Postgres', 'Database').args.instance));
    const usable = usableConnections(instance);
    expect(
      usable,
      `no max_connections known for ${instance}: add it to MAX_CONNECTIONS in infra/budget.ts`,
    ).toBeDefined();
    const budget = graphBudget(graph);
    expect(budget).toEqual(BUDGET);
    expect(worstCaseConnections(budget)).toBeLessThanOrEqual(usable!);
    // The check bites: twice the containers would not fit.
    expect(worstCaseConnections({ ...budget, containerMaxTasks: 2 * budget.containerMaxTasks })).toBeGreaterThan(
      usable!,
    );
    expect(MAX_CONNECTIONS[instance]).toBeLessThan(112);
  });

  if (scenario.dev) {
    it('scales nothing in `sst dev`, where the worker runs locally', () => {
      expect(graph.all('aws.appautoscaling.Policy')).toEqual([]);
      expect(graph.all('aws.cloudwatch.MetricAlarm')).toEqual([]);
    });
  } else {
    it('scales the container service on the queue metrics the tick writes, under the same names and namespace', () => {
      const namespace = plainEnvironment(fn('Tick')).METRICS_NAMESPACE;
      expect(namespace).toBe(`jobs-scheduler/${scenario.stage}`);
      const target = (service().instance as { nodes: { autoScalingTarget: Record<string, unknown> } }).nodes
        .autoScalingTarget;

      const load = graph.one('aws.appautoscaling.Policy', 'ContainerWorkerLoad').args;
      expect(load).toMatchObject({
        policyType: 'TargetTrackingScaling',
        resourceId: target.resourceId,
        scalableDimension: target.scalableDimension,
      });
      const tracking = load.targetTrackingScalingPolicyConfiguration;
      const metrics = tracking.customizedMetricSpecification.metrics as {
        id: string;
        expression?: string;
        metricStat?: { metric: Record<string, unknown> };
      }[];
      const byId = Object.fromEntries(metrics.map((m) => [m.id, m]));
      expect(byId.depth!.metricStat!.metric).toEqual({
        namespace,
        metricName: QUEUE_METRICS.queueDepth,
        dimensions: [{ name: 'Lane', value: 'long' }],
      });
      expect(byId.running!.metricStat!.metric).toEqual({
        namespace,
        metricName: QUEUE_METRICS.running,
        dimensions: [{ name: 'Lane', value: 'long' }],
      });
      expect(byId.workers!.metricStat!.metric).toMatchObject({ namespace, metricName: QUEUE_METRICS.containerWorkers });
      expect(byId.load!.expression).toBe('IF(workers > 0, (depth + running) / workers, depth + running)');
      const concurrency = Number(plainEnvironment(service()).WORKER_CONCURRENCY);
      expect(tracking.targetValue).toBeGreaterThan(0);
      expect(tracking.targetValue).toBeLessThan(concurrency);

      const step = graph.one('aws.appautoscaling.Policy', 'ContainerWorkerWaiting');
      const alarm = graph.one('aws.cloudwatch.MetricAlarm', 'ContainerWorkerWaitingAlarm').args;
      expect(alarm).toMatchObject({
        namespace,
        metricName: QUEUE_METRICS.oldestWaitingAge,
        dimensions: { Lane: 'long' },
        comparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(alarm.alarmActions).toEqual([(step.instance as { arn: unknown }).arn]);
      expect(step.args.stepScalingPolicyConfiguration.stepAdjustments).toEqual([
        { metricIntervalLowerBound: '0', scalingAdjustment: 1 },
      ]);
    });
  }
});
