/**
 * The alarms in the resource graph: oldest waiting execution, dead executions and tick errors, all to the Alerts
 * SNS topic, on the metric names and namespace the tick writes (functions/queue-metrics.ts); none in `sst dev`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_METRICS } from '../../functions/queue-metrics';
import { plainEnvironment } from './runtime-env';
import { evaluateSstConfig, resolve, uninstallSstGlobals, type ResourceGraph } from './sst-globals';

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

  it('sends every alarm, and its recovery, to the Alerts topic, which is an output', () => {
    const topic = graph.one('aws.sns.Topic', 'Alerts').instance as { arn: unknown };
    for (const name of ['OldestWaitingAlarm', 'DeadExecutionsAlarm', 'TickErrorsAlarm']) {
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
