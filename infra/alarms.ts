/**
 * Alarms for operators, to the `Alerts` SNS topic (subscribe an address, a chat integration or a pager to it):
 * - an execution has waited OLDEST_WAITING_ALARM_SECONDS or more to start, in any lane, two minutes running;
 * - an attempt went dead (the dead-letter queue grew), within the minute the tick folded it;
 * - the tick failed, or a step of it failed (a failed event flush included), three minutes running, or no tick ran
 *   at all (missing data breaches);
 * - no container worker heartbeats (the long lane has no other worker);
 * - the worker Lambdas are throttled five minutes running (the fleet is at its reserved concurrency);
 * - the API answers with 5xx;
 * - the resources: RDS free storage, CPU credit balance of a burstable database or cache class, Redis memory, and
 *   each NAT instance's status checks.
 * The queue alarms are on the metrics the tick writes as EMF lines (functions/queue-metrics.ts); the rest on the
 * AWS services' own metrics. What each means and what to do: docs/operations.md (Runbook).
 * Not in `sst dev`, where the tick runs on the developer's machine.
 */
import {
  API_5XX_ALARM_COUNT,
  CPU_CREDIT_ALARM_BALANCE,
  FREE_STORAGE_ALARM_BYTES,
  REDIS_MEMORY_ALARM_PERCENT,
  isBurstable,
} from './alarm-thresholds';
import { api } from './api';
import { DATABASE_INSTANCE } from './budget';
import { database, redis } from './data';
import { vpc } from './network';
import { METRICS_NAMESPACE } from './runtime';
import { tickFunction } from './scheduler';
import { REDIS_INSTANCE, VPC_ZONES } from './settings';
import { workerFunction } from './workers';
import { QUEUE_METRIC_NAMES } from './worker-scaling';

/** An execution waiting this long (seconds) to start means the workers are not keeping up, or none run. */
const OLDEST_WAITING_ALARM_SECONDS = 300;
const LANES = ['short', 'long'] as const;

function laneQueries(prefix: string, metricName: string, stat: string, extra: Record<string, string> = {}) {
  return LANES.map((lane) => ({
    id: `${prefix}_${lane}`,
    metric: { namespace: METRICS_NAMESPACE, metricName, dimensions: { Lane: lane, ...extra }, period: 60, stat },
    returnData: false,
  }));
}

function createAlarms() {
  const alerts = new aws.sns.Topic('Alerts', {});
  const notify = { alarmActions: [alerts.arn], okActions: [alerts.arn] };

  const oldestWaiting = new aws.cloudwatch.MetricAlarm('OldestWaitingAlarm', {
    alarmDescription: `An execution has waited ${OLDEST_WAITING_ALARM_SECONDS} s or more to start (jobs_oldest_waiting_seconds)`,
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    threshold: OLDEST_WAITING_ALARM_SECONDS,
    evaluationPeriods: 2,
    metricQueries: [
      ...laneQueries('wait', QUEUE_METRIC_NAMES.oldestWaitingAge, 'Maximum'),
      {
        id: 'oldest',
        expression: 'MAX([wait_short, wait_long])',
        label: 'Oldest waiting execution (s)',
        returnData: true,
      },
    ],
    // The tick writes a value every minute (0 when nothing waits): a gap is a tick problem, alarmed on below.
    treatMissingData: 'notBreaching',
    ...notify,
  });

  const dead = new aws.cloudwatch.MetricAlarm('DeadExecutionsAlarm', {
    alarmDescription:
      'An attempt went dead: its retries are exhausted and it is in the dead-letter queue (replay it from /dead)',
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    threshold: 1,
    evaluationPeriods: 1,
    metricQueries: [
      ...laneQueries('dead', QUEUE_METRIC_NAMES.attemptsFinished, 'Sum', { Status: 'dead' }),
      { id: 'dead', expression: 'dead_short + dead_long', label: 'Dead attempts', returnData: true },
    ],
    treatMissingData: 'notBreaching',
    ...notify,
  });

  const tickErrors = new aws.cloudwatch.MetricAlarm('TickErrorsAlarm', {
    alarmDescription:
      'The scheduler tick failed (or one of its steps did) three minutes running, or did not run: nothing new is scheduled',
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    threshold: 1,
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
    metricQueries: [
      {
        id: 'failed',
        metric: {
          namespace: 'AWS/Lambda',
          metricName: 'Errors',
          dimensions: { FunctionName: tickFunction.name },
          period: 60,
          stat: 'Sum',
        },
        returnData: false,
      },
      {
        id: 'steps',
        metric: {
          namespace: METRICS_NAMESPACE,
          metricName: QUEUE_METRIC_NAMES.tickStepErrors,
          period: 60,
          stat: 'Sum',
        },
        returnData: false,
      },
      { id: 'errors', expression: 'FILL(failed, 0) + steps', label: 'Tick errors', returnData: true },
    ],
    // Every successful tick writes TickStepErrors (0 when all went well): no data means no tick ran.
    treatMissingData: 'breaching',
    ...notify,
  });

  // A container worker that heartbeats, as the tick counts them (ContainerWorkers): none for three minutes means the
  // service has no running task, or its tasks cannot reach the database. A gap is the tick's alarm, not this one.
  const containerWorkers = new aws.cloudwatch.MetricAlarm('ContainerWorkersAlarm', {
    alarmDescription:
      'No container worker has a heartbeat (running tasks < 1) three minutes running: the long lane is not served',
    namespace: METRICS_NAMESPACE,
    metricName: QUEUE_METRIC_NAMES.containerWorkers,
    statistic: 'Maximum',
    period: 60,
    evaluationPeriods: 3,
    threshold: 1,
    comparisonOperator: 'LessThanThreshold',
    treatMissingData: 'notBreaching',
    ...notify,
  });

  const workerThrottles = new aws.cloudwatch.MetricAlarm('WorkerThrottlesAlarm', {
    alarmDescription:
      'Wake-ups of the worker Lambda were throttled five minutes running: the fleet is at its reserved concurrency',
    namespace: 'AWS/Lambda',
    metricName: 'Throttles',
    dimensions: { FunctionName: workerFunction.name },
    statistic: 'Sum',
    period: 60,
    evaluationPeriods: 5,
    threshold: 1,
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    treatMissingData: 'notBreaching',
    ...notify,
  });

  const api5xx = new aws.cloudwatch.MetricAlarm('Api5xxAlarm', {
    alarmDescription: `The API answered ${API_5XX_ALARM_COUNT} or more requests with a 5xx status in five minutes`,
    namespace: 'AWS/ApiGateway',
    metricName: '5xx',
    dimensions: { ApiId: api.nodes.api.id },
    statistic: 'Sum',
    period: 300,
    evaluationPeriods: 1,
    threshold: API_5XX_ALARM_COUNT,
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    treatMissingData: 'notBreaching',
    ...notify,
  });

  const instance = database.nodes.instance!;
  const databaseStorage = new aws.cloudwatch.MetricAlarm('DatabaseFreeStorageAlarm', {
    alarmDescription: `RDS free storage is below ${FREE_STORAGE_ALARM_BYTES / 1024 ** 3} GiB: storage autoscaling reached databaseMaxStorageGb or cannot keep up`,
    namespace: 'AWS/RDS',
    metricName: 'FreeStorageSpace',
    dimensions: { DBInstanceIdentifier: instance.identifier },
    statistic: 'Minimum',
    period: 300,
    evaluationPeriods: 2,
    threshold: FREE_STORAGE_ALARM_BYTES,
    comparisonOperator: 'LessThanThreshold',
    treatMissingData: 'notBreaching',
    ...notify,
  });

  const databaseCredits = isBurstable(DATABASE_INSTANCE)
    ? new aws.cloudwatch.MetricAlarm('DatabaseCpuCreditsAlarm', {
        alarmDescription: `The database's CPU credit balance is below ${CPU_CREDIT_ALARM_BALANCE}: it is about to bill surplus credits`,
        namespace: 'AWS/RDS',
        metricName: 'CPUCreditBalance',
        dimensions: { DBInstanceIdentifier: instance.identifier },
        statistic: 'Minimum',
        period: 300,
        evaluationPeriods: 3,
        threshold: CPU_CREDIT_ALARM_BALANCE,
        comparisonOperator: 'LessThanThreshold',
        treatMissingData: 'notBreaching',
        ...notify,
      })
    : null;

  const cache = redis ? redisAlarms(redis, notify) : null;

  // fck-nat instances: one per zone, each its zone's only way out (EventBridge, Lambda Invoke, ECR, HTTP targets).
  const natInstances = Array.from(
    { length: VPC_ZONES },
    (_, i) =>
      new aws.cloudwatch.MetricAlarm(`NatInstance${i + 1}HealthAlarm`, {
        alarmDescription: `NAT instance ${i + 1} fails its EC2 status checks (or reports none): its zone has no outbound traffic`,
        namespace: 'AWS/EC2',
        metricName: 'StatusCheckFailed',
        dimensions: { InstanceId: vpc.nodes.natInstances.apply((list) => list[i]!.id) },
        statistic: 'Maximum',
        period: 60,
        evaluationPeriods: 2,
        threshold: 1,
        comparisonOperator: 'GreaterThanOrEqualToThreshold',
        // A NAT instance that reports nothing is gone or stopped: as bad as a failed check.
        treatMissingData: 'breaching',
        ...notify,
      }),
  );

  return {
    alerts,
    oldestWaiting,
    dead,
    tickErrors,
    containerWorkers,
    workerThrottles,
    api5xx,
    databaseStorage,
    databaseCredits,
    ...cache,
    natInstances,
  };
}

/**
 * Memory (and CPU credits, on a burstable class) of every node of the Redis replication group, the replica included:
 * the largest use (the smallest balance) of any of them.
 */
function redisAlarms(
  cache: sst.aws.Redis,
  notify: { alarmActions: $util.Input<string>[]; okActions: $util.Input<string>[] },
) {
  const group = cache.nodes.cluster;
  const perNode = (prefix: string, metricName: string, stat: string, reduce: 'MAX' | 'MIN', label: string) =>
    group.memberClusters.apply((members) => [
      ...members.map((member, i) => ({
        id: `${prefix}${i}`,
        metric: {
          namespace: 'AWS/ElastiCache',
          metricName,
          dimensions: { CacheClusterId: member },
          period: 60,
          stat,
        },
        returnData: false,
      })),
      {
        id: prefix,
        expression: `${reduce}([${members.map((_, i) => `${prefix}${i}`).join(', ')}])`,
        label,
        returnData: true,
      },
    ]);
  const redisMemory = new aws.cloudwatch.MetricAlarm('RedisMemoryAlarm', {
    alarmDescription: `Redis memory is at ${REDIS_MEMORY_ALARM_PERCENT}% of maxmemory or more: at 100% it refuses writes, claims included`,
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    threshold: REDIS_MEMORY_ALARM_PERCENT,
    evaluationPeriods: 3,
    metricQueries: perNode('memory', 'DatabaseMemoryUsagePercentage', 'Maximum', 'MAX', 'Redis memory used (%)'),
    treatMissingData: 'notBreaching',
    ...notify,
  });
  const redisCredits = isBurstable(REDIS_INSTANCE)
    ? new aws.cloudwatch.MetricAlarm('RedisCpuCreditsAlarm', {
        alarmDescription: `A Redis node's CPU credit balance is below ${CPU_CREDIT_ALARM_BALANCE}: it is about to bill surplus credits`,
        comparisonOperator: 'LessThanThreshold',
        threshold: CPU_CREDIT_ALARM_BALANCE,
        evaluationPeriods: 3,
        metricQueries: perNode('credits', 'CPUCreditBalance', 'Minimum', 'MIN', 'Lowest Redis CPU credit balance'),
        treatMissingData: 'notBreaching',
        ...notify,
      })
    : null;
  return { redisMemory, redisCredits };
}

export const alarms = $dev ? null : createAlarms();
