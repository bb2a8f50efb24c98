/**
 * How the container service scales: on the queue metrics the tick writes every minute (functions/queue-metrics.ts),
 * not on CPU or memory, which sleeping or I/O-bound jobs barely use. Only containers serve the long lane, so its
 * load decides; short-lane work has the worker Lambdas.
 *
 * - Target tracking: long-lane attempts (waiting and running) per container worker, held at 75% of a worker's
 *   concurrency; Application Auto Scaling adds tasks when it is above and removes them when it is below.
 * - A step out when the oldest waiting long-lane attempt has waited two minutes in two successive ticks, whatever
 *   the ratio says (e.g. no worker has reported yet).
 * Tasks running attempts longer than their stop grace are protected from scale-in (functions/task-protection.ts).
 */
import { METRICS_NAMESPACE } from './runtime';

/** The tick's metric names (functions/queue-metrics.ts writes them; test/infra checks that both agree). */
export const QUEUE_METRIC_NAMES = {
  queueDepth: 'QueueDepth',
  running: 'RunningExecutions',
  oldestWaitingAge: 'OldestWaitingAgeSeconds',
  containerWorkers: 'ContainerWorkers',
  deadLettered: 'DeadLettered',
  attemptsFinished: 'AttemptsFinished',
  tickStepErrors: 'TickStepErrors',
} as const;

/** Long-lane attempts waiting longer than this (seconds, two ticks running) add a task. */
const WAITING_ALARM_SECONDS = 120;

const longLane = [{ name: 'Lane', value: 'long' }];

export function scaleOnQueueMetrics(target: aws.appautoscaling.Target, options: { attemptsPerTask: number }) {
  const scalable = {
    serviceNamespace: target.serviceNamespace,
    scalableDimension: target.scalableDimension,
    resourceId: target.resourceId,
  };
  const stat = (id: string, metricName: string, dimensions?: typeof longLane) => ({
    id,
    metricStat: { metric: { namespace: METRICS_NAMESPACE, metricName, dimensions }, stat: 'Maximum' },
    returnData: false,
  });

  const load = new aws.appautoscaling.Policy('ContainerWorkerLoad', {
    ...scalable,
    policyType: 'TargetTrackingScaling',
    targetTrackingScalingPolicyConfiguration: {
      targetValue: Math.max(1, Math.floor(options.attemptsPerTask * 0.75)),
      // Out as soon as the metric says so; in slowly (a protected task is skipped anyway).
      scaleOutCooldown: 60,
      scaleInCooldown: 300,
      customizedMetricSpecification: {
        metrics: [
          stat('depth', QUEUE_METRIC_NAMES.queueDepth, longLane),
          stat('running', QUEUE_METRIC_NAMES.running, longLane),
          stat('workers', QUEUE_METRIC_NAMES.containerWorkers),
          {
            id: 'load',
            expression: 'IF(workers > 0, (depth + running) / workers, depth + running)',
            label: 'Long-lane attempts per container worker',
            returnData: true,
          },
        ],
      },
    },
  });

  const stepOut = new aws.appautoscaling.Policy('ContainerWorkerWaiting', {
    ...scalable,
    policyType: 'StepScaling',
    stepScalingPolicyConfiguration: {
      adjustmentType: 'ChangeInCapacity',
      cooldown: 120,
      metricAggregationType: 'Maximum',
      stepAdjustments: [{ metricIntervalLowerBound: '0', scalingAdjustment: 1 }],
    },
  });

  const waiting = new aws.cloudwatch.MetricAlarm('ContainerWorkerWaitingAlarm', {
    alarmDescription: `A long-lane execution has waited ${WAITING_ALARM_SECONDS} s or more to start: add a container worker`,
    namespace: METRICS_NAMESPACE,
    metricName: QUEUE_METRIC_NAMES.oldestWaitingAge,
    dimensions: { Lane: 'long' },
    statistic: 'Maximum',
    period: 60,
    evaluationPeriods: 2,
    threshold: WAITING_ALARM_SECONDS,
    comparisonOperator: 'GreaterThanOrEqualToThreshold',
    // The tick writes a value every minute (0 when nothing waits); a gap means no tick ran, not work waiting.
    treatMissingData: 'notBreaching',
    alarmActions: [stepOut.arn],
  });

  return { load, stepOut, waiting };
}
