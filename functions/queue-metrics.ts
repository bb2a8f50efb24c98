/**
 * @module queue-metrics — the tick's CloudWatch metrics (EMF lines, see emf.ts), which the container service scales
 * on (infra/workers.ts): per lane the executions due and waiting to start, those running, and the oldest one's wait;
 * and the container workers that heartbeat. All of it from PostgreSQL, by its clock.
 */
import { LANES, type WorkerInfo } from '@jobs/core';
import type { LaneLoad } from '@jobs/store';
import type { EmfWriter } from './emf';

/** Metric names: infra/workers.ts scales on the same names (test/infra checks both sides agree). */
export const QUEUE_METRICS = {
  queueDepth: 'QueueDepth',
  running: 'RunningExecutions',
  oldestWaitingAge: 'OldestWaitingAgeSeconds',
  containerWorkers: 'ContainerWorkers',
} as const;

export interface QueueMetricsSource {
  store: { executionsLoadByLane(): Promise<Record<string, LaneLoad>>; workerListActive(activeWithinMs: number): Promise<WorkerInfo[]> };
}

export interface QueueMetricsSummary {
  lanes: Record<string, LaneLoad>;
  containerWorkers: number;
}

/**
 * Writes one EMF line per lane and one for the container fleet; returns what it wrote.
 * @example await publishQueueMetrics(ctx, metrics, { workerActiveWithinMs: 60_000 })
 */
export async function publishQueueMetrics(
  source: QueueMetricsSource,
  metrics: EmfWriter,
  options: { workerActiveWithinMs: number; at?: Date },
): Promise<QueueMetricsSummary> {
  const [lanes, workers] = await Promise.all([source.store.executionsLoadByLane(), source.store.workerListActive(options.workerActiveWithinMs)]);
  const at = options.at ?? new Date();
  for (const lane of LANES) {
    const load = lanes[lane] ?? { waiting: 0, running: 0, oldestWaitingAgeMs: null };
    metrics.put(
      { Lane: lane },
      [
        { name: QUEUE_METRICS.queueDepth, unit: 'Count', value: load.waiting },
        { name: QUEUE_METRICS.running, unit: 'Count', value: load.running },
        // 0 when nothing waits, so an alarm on it sees a value every minute rather than missing data.
        { name: QUEUE_METRICS.oldestWaitingAge, unit: 'Seconds', value: (load.oldestWaitingAgeMs ?? 0) / 1000 },
      ],
      at,
    );
  }
  const containerWorkers = workers.filter((w) => w.kind === 'container').length;
  metrics.put({}, [{ name: QUEUE_METRICS.containerWorkers, unit: 'Count', value: containerWorkers }], at);
  return { lanes, containerWorkers };
}
