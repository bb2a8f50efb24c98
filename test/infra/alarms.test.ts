/**
 * The alarms in the resource graph: oldest waiting execution, dead executions and tick errors, all to the Alerts
 * SNS topic, on the metric names and namespace the tick writes (functions/queue-metrics.ts); none in `sst dev`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QUEUE_METRICS } from '../../functions/queue-metrics';
import {
  CPU_CREDIT_ALARM_BALANCE,
  FREE_STORAGE_ALARM_BYTES,
  REDIS_MEMORY_ALARM_PERCENT,
} from '../../infra/alarm-thresholds';
import { plainEnvironment } from './runtime-env';
import { evaluateSstConfig, resolve, uninstallSstGlobals, type ResourceGraph } from './sst-globals';

// Production with its queue on Redis, the setting's other value, so the Redis alarms are checked too; the committed
// production (queue: 'postgres', no ElastiCache) is priced and checked in cost.test.ts and queue-postgres.test.ts.
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

type Query = {
  id: string;
  expression?: string;
  metric?: {
    namespace: string;
    metricName: string;
    dimensions?: Record<string, unknown>;
    stat: string;
    period: number;
  };
};

describe('sst deploy --stage production', () => {
  let graph: ResourceGraph;
  let outputs: Record<string, unknown>;
  beforeAll(async () => {
    ({ graph, outputs } = await evaluateSstConfig({
      title: 'production',
      stage: 'production',
      dev: false,
      production: true,
    } as never));
  });
  afterAll(uninstallSstGlobals);

  const alarm = (name: string) => graph.one('aws.cloudwatch.MetricAlarm', name).args;
  const queries = (name: string) => Object.fromEntries((alarm(name).metricQueries as Query[]).map((q) => [q.id, q]));

  /** The alarms an operator is told about (the container scaling alarm drives a policy instead). */
  const OPERATOR_ALARMS = [
    'OldestWaitingAlarm',
    'DeadExecutionsAlarm',
    'TickErrorsAlarm',
    'ContainerWorkersAlarm',
    'WorkerThrottlesAlarm',
    'Api5xxAlarm',
    'DatabaseFreeStorageAlarm',
    'DatabaseCpuCreditsAlarm',
    'RedisMemoryAlarm',
    'RedisCpuCreditsAlarm',
    'NatInstance1HealthAlarm',
    'NatInstance2HealthAlarm',
  ];

  it('sends every alarm, and its recovery, to the Alerts topic, which is an output', () => {
    const topic = graph.one('aws.sns.Topic', 'Alerts').instance as { arn: unknown };
    const all = graph.all('aws.cloudwatch.MetricAlarm').map((a) => a.name);
    expect(all.sort()).toEqual([...OPERATOR_ALARMS, 'ContainerWorkerWaitingAlarm'].sort());
    for (const name of OPERATOR_ALARMS) {
      expect(alarm(name).alarmActions, name).toEqual([topic.arn]);
      expect(alarm(name).okActions, name).toEqual([topic.arn]);
    }
    expect(resolve(outputs.alerts)).toBe(resolve(topic.arn));
  });

  it('alarms when an execution of any lane has waited too long, two minutes running', () => {
    const namespace = plainEnvironment(graph.one('sst.aws.Function', 'Tick')).METRICS_NAMESPACE;
    const q = queries('OldestWaitingAlarm');
    for (const lane of ['short', 'long']) {
      expect(q[`wait_${lane}`]!.metric).toEqual({
        namespace,
        metricName: QUEUE_METRICS.oldestWaitingAge,
        dimensions: { Lane: lane },
        period: 60,
        stat: 'Maximum',
      });
    }
    expect(q.oldest!.expression).toBe('MAX([wait_short, wait_long])');
    expect(alarm('OldestWaitingAlarm')).toMatchObject({
      threshold: 300,
      evaluationPeriods: 2,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on any dead attempt, from the finished counts of either lane', () => {
    const namespace = plainEnvironment(graph.one('sst.aws.Function', 'Tick')).METRICS_NAMESPACE;
    const q = queries('DeadExecutionsAlarm');
    for (const lane of ['short', 'long']) {
      expect(q[`dead_${lane}`]!.metric).toEqual({
        namespace,
        metricName: QUEUE_METRICS.attemptsFinished,
        dimensions: { Lane: lane, Status: 'dead' },
        period: 60,
        stat: 'Sum',
      });
    }
    expect(q.dead!.expression).toBe('dead_short + dead_long');
    expect(alarm('DeadExecutionsAlarm')).toMatchObject({
      threshold: 1,
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      treatMissingData: 'notBreaching',
    });
  });

  it('alarms when the tick fails, a step of it fails, or it does not run', () => {
    const tick = graph.one('sst.aws.Function', 'Tick').instance as { name: unknown };
    const q = queries('TickErrorsAlarm');
    expect(q.failed!.metric).toMatchObject({
      namespace: 'AWS/Lambda',
      metricName: 'Errors',
      dimensions: { FunctionName: tick.name },
      stat: 'Sum',
    });
    expect(q.steps!.metric).toMatchObject({ metricName: QUEUE_METRICS.tickStepErrors, stat: 'Sum' });
    expect(q.errors!.expression).toBe('FILL(failed, 0) + steps');
    expect(alarm('TickErrorsAlarm')).toMatchObject({
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      treatMissingData: 'breaching',
    });
  });

  it('alarms when RDS free storage runs low: autoscaling reached its ceiling or cannot keep up', () => {
    const instance = graph.one('aws.rds.Instance', 'DatabaseInstance');
    // Autoscaling on, with room: the alarm is for the ceiling, far above the start.
    expect(instance.args.maxAllocatedStorage).toBeGreaterThanOrEqual(5 * instance.args.allocatedStorage);
    const db = graph.one('sst.aws.Postgres', 'Database').instance as { nodes: { instance: { identifier: unknown } } };
    expect(alarm('DatabaseFreeStorageAlarm')).toMatchObject({
      namespace: 'AWS/RDS',
      metricName: 'FreeStorageSpace',
      dimensions: { DBInstanceIdentifier: db.nodes.instance.identifier },
      statistic: 'Minimum',
      comparisonOperator: 'LessThanThreshold',
      threshold: FREE_STORAGE_ALARM_BYTES,
    });
    // Below autoscaling's own trigger at the start size (10% free), so a growing database does not alarm.
    expect(FREE_STORAGE_ALARM_BYTES).toBeLessThan(0.1 * instance.args.allocatedStorage * 1024 ** 3);
  });

  it('alarms on the CPU credits of a burstable database and cache', () => {
    expect(graph.one('aws.rds.Instance', 'DatabaseInstance').args.instanceClass).toMatch(/^db\.t/);
    const db = graph.one('sst.aws.Postgres', 'Database').instance as { nodes: { instance: { identifier: unknown } } };
    expect(alarm('DatabaseCpuCreditsAlarm')).toMatchObject({
      namespace: 'AWS/RDS',
      metricName: 'CPUCreditBalance',
      dimensions: { DBInstanceIdentifier: db.nodes.instance.identifier },
      comparisonOperator: 'LessThanThreshold',
      threshold: CPU_CREDIT_ALARM_BALANCE,
    });
    expect(graph.one('aws.elasticache.ReplicationGroup', 'RedisCluster').args.nodeType).toMatch(/^cache\.t/);
    expect(alarm('RedisCpuCreditsAlarm')).toMatchObject({ comparisonOperator: 'LessThanThreshold' });
    const q = resolve(alarm('RedisCpuCreditsAlarm').metricQueries) as Query[];
    expect(q.filter((x) => x.metric).map((x) => x.metric!.metricName)).toEqual([
      'CPUCreditBalance',
      'CPUCreditBalance',
    ]);
  });

  it('alarms on the memory of every Redis node, the replica included', () => {
    const group = graph.one('aws.elasticache.ReplicationGroup', 'RedisCluster').args;
    expect(group.replicasPerNodeGroup).toBe(1);
    const redis = graph.one('sst.aws.Redis', 'Redis').instance as { nodes: { cluster: { memberClusters: unknown } } };
    const members = resolve(redis.nodes.cluster.memberClusters) as string[];
    expect(members).toHaveLength(2);
    const q = resolve(alarm('RedisMemoryAlarm').metricQueries) as Query[];
    expect(q.filter((x) => x.metric).map((x) => x.metric)).toEqual(
      members.map((member) => ({
        namespace: 'AWS/ElastiCache',
        metricName: 'DatabaseMemoryUsagePercentage',
        dimensions: { CacheClusterId: member },
        period: 60,
        stat: 'Maximum',
      })),
    );
    expect(q.find((x) => x.expression)!.expression).toBe('MAX([memory0, memory1])');
    expect(alarm('RedisMemoryAlarm')).toMatchObject({
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
      threshold: REDIS_MEMORY_ALARM_PERCENT,
    });
    // The queue must never be starved: the node refuses writes when full rather than evicting a lease.
    const parameters = graph.one('aws.elasticache.ParameterGroup', 'RedisParameterGroup').args.parameters;
    expect(parameters).toContainEqual({ name: 'maxmemory-policy', value: 'noeviction' });
  });

  it('alarms when no container task runs (no container worker heartbeats)', () => {
    const namespace = plainEnvironment(graph.one('sst.aws.Function', 'Tick')).METRICS_NAMESPACE;
    expect(alarm('ContainerWorkersAlarm')).toMatchObject({
      namespace,
      metricName: QUEUE_METRICS.containerWorkers,
      statistic: 'Maximum',
      comparisonOperator: 'LessThanThreshold',
      threshold: 1,
    });
  });

  it('alarms when the worker Lambda is throttled, and when the API answers 5xx', () => {
    const worker = graph.one('sst.aws.Function', 'Worker').instance as { name: unknown };
    expect(alarm('WorkerThrottlesAlarm')).toMatchObject({
      namespace: 'AWS/Lambda',
      metricName: 'Throttles',
      dimensions: { FunctionName: worker.name },
      statistic: 'Sum',
      comparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const api = graph.one('sst.aws.ApiGatewayV2', 'Api').instance as { nodes: { api: { id: unknown } } };
    expect(alarm('Api5xxAlarm')).toMatchObject({
      namespace: 'AWS/ApiGateway',
      metricName: '5xx',
      dimensions: { ApiId: api.nodes.api.id },
      statistic: 'Sum',
    });
  });

  it('alarms on the status checks of every NAT instance, and when one reports nothing', () => {
    const vpc = graph.one('sst.aws.Vpc', 'Vpc').instance as { nodes: { natInstances: unknown } };
    const instances = resolve(vpc.nodes.natInstances) as { id: string }[];
    expect(instances).toHaveLength(graph.all('aws.ec2.Instance').length);
    instances.forEach((instance, i) => {
      const args = alarm(`NatInstance${i + 1}HealthAlarm`);
      expect(args).toMatchObject({
        namespace: 'AWS/EC2',
        metricName: 'StatusCheckFailed',
        comparisonOperator: 'GreaterThanOrEqualToThreshold',
        threshold: 1,
        treatMissingData: 'breaching',
      });
      expect(resolve(args.dimensions)).toEqual({ InstanceId: instance.id });
    });
  });

  it('throttles the API stage so that overload is a 429, within what the reserved API Lambdas can take', () => {
    const stage = graph.one('aws.apigatewayv2.Stage', 'ApiStage').args;
    const api = graph.one('sst.aws.ApiGatewayV2', 'Api').instance as { nodes: { api: { id: unknown } } };
    expect(resolve(stage.apiId)).toBe(resolve(api.nodes.api.id));
    const reserved = graph.one('sst.aws.Function', 'ApiHandler').args.concurrency.reserved as number;
    const { throttlingBurstLimit, throttlingRateLimit } = stage.defaultRouteSettings ?? {};
    // A burst never exceeds the slots (a throttled Lambda is a 500), and the steady rate is bounded.
    expect(throttlingBurstLimit).toBeGreaterThan(0);
    expect(throttlingBurstLimit).toBeLessThanOrEqual(reserved);
    expect(throttlingRateLimit).toBeGreaterThan(0);
    expect(throttlingRateLimit).toBeLessThanOrEqual(4 * reserved);
  });

  it('serves /metrics through the same $default route as the API, behind its keys', () => {
    const routes = graph.all('sst.aws.ApiGatewayV2.route').map((r) => r.name);
    expect(routes).toEqual(['$default']);
  });
});

describe('sst dev', () => {
  afterAll(uninstallSstGlobals);
  it('defines no alarms and no topic', async () => {
    const { graph, outputs } = await evaluateSstConfig({
      title: 'dev',
      stage: 'dev',
      dev: true,
      production: false,
    } as never);
    expect(graph.all('aws.cloudwatch.MetricAlarm')).toEqual([]);
    expect(graph.all('aws.sns.Topic')).toEqual([]);
    expect(outputs.alerts).toBeUndefined();
  });
});
