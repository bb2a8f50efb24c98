/**
 * Alarms for operators, to the `Alerts` SNS topic (subscribe an address, a chat integration or a pager to it):
 * - an execution has waited OLDEST_WAITING_ALARM_SECONDS or more to start, in any lane, two minutes running;
 * - an attempt went dead (the dead-letter queue grew), within the minute the tick folded it;
 * - the tick failed, or a step of it failed, three minutes running, or no tick ran at all (missing data breaches).
 * All on the metrics the tick writes as EMF lines (functions/queue-metrics.ts), plus Lambda's own Errors metric.
 * Not in `sst dev`, where the tick runs on the developer's machine.
 */
import { METRICS_NAMESPACE } from './runtime';
import { tickFunction } from './scheduler';
import { QUEUE_METRIC_NAMES } from './worker-scaling';

/** An execution waiting this long (seconds) to start means the workers are not keeping up, or none run. */
export const OLDEST_WAITING_ALARM_SECONDS = 300;
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

  return { alerts, oldestWaiting, dead, tickErrors };
}

export const alarms = $dev ? null : createAlarms();
