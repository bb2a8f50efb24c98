/**
 * @module queue-metrics — the tick's CloudWatch metrics (EMF lines, see emf.ts), which the container service scales
 * on (infra/workers.ts) and the alarms watch (infra/alarms.ts): per lane the executions due and waiting to start,
 * those running, the oldest one's wait (PostgreSQL, by its clock) and the dead-lettered ids (Redis); the container
 * workers that heartbeat; the attempts that finished, per lane and status, as folded into the monotonic totals by
 * this tick (each closed minute is folded once, so CloudWatch's sums match the Prometheus counter); and the tick's
 * own failed steps.
 */
import { LANES, type Lane, type WorkerInfo } from '@jobs/core';
import type { FoldResult, LaneLoad } from '@jobs/store';
import type { EmfWriter } from './emf';

/** Metric names: infra/workers.ts scales on the same names (test/infra checks both sides agree). */
export const QUEUE_METRICS = {
  queueDepth: 'QueueDepth',
  running: 'RunningExecutions',
  oldestWaitingAge: 'OldestWaitingAgeSeconds',
  containerWorkers: 'ContainerWorkers',
  deadLettered: 'DeadLettered',
  attemptsFinished: 'AttemptsFinished',
  tickStepErrors: 'TickStepErrors',
} as const;

export interface QueueMetricsSource {
  store: {
    executionsLoadByLane(): Promise<Record<string, LaneLoad>>;
    workerListActive(activeWithinMs: number): Promise<WorkerInfo[]>;
  };
  queue: { depth(): Promise<Record<Lane, { dead: number }>> };
}

export interface QueueMetricsSummary {
  lanes: Record<string, LaneLoad>;
  containerWorkers: number;
  deadLettered: Record<string, number>;
  /** AttemptsFinished lines written: the fold's groups. */
  finished: { status: string; lane: string; count: number }[];
}

/**
 * Writes one EMF line per lane and one for the container fleet; returns what it wrote.
 * @example await publishQueueMetrics(ctx, metrics, { workerActiveWithinMs: 60_000 })
 */
export async function publishQueueMetrics(
  source: QueueMetricsSource,
  metrics: EmfWriter,
  options: { workerActiveWithinMs: number; at?: Date; folded?: FoldResult | null; stepErrors?: number },
): Promise<QueueMetricsSummary> {
  const [lanes, workers, depth] = await Promise.all([
    source.store.executionsLoadByLane(),
    source.store.workerListActive(options.workerActiveWithinMs),
    source.queue.depth(),
  ]);
  const at = options.at ?? new Date();
  const deadLettered: Record<string, number> = {};
  for (const lane of LANES) {
    const load = lanes[lane] ?? { waiting: 0, running: 0, oldestWaitingAgeMs: null };
    deadLettered[lane] = depth[lane]?.dead ?? 0;
    metrics.put(
      { Lane: lane },
      [
        { name: QUEUE_METRICS.queueDepth, unit: 'Count', value: load.waiting },
        { name: QUEUE_METRICS.running, unit: 'Count', value: load.running },
        // 0 when nothing waits, so an alarm on it sees a value every minute rather than missing data.
        { name: QUEUE_METRICS.oldestWaitingAge, unit: 'Seconds', value: (load.oldestWaitingAgeMs ?? 0) / 1000 },
        { name: QUEUE_METRICS.deadLettered, unit: 'Count', value: deadLettered[lane]! },
      ],
      at,
    );
  }
  // Every (lane, status) each tick, zeros included: an alarm on dead attempts then sees 0, not missing data.
  const finished = LANES.flatMap((lane) =>
    FINISHED_STATUSES.map((status) => ({
      status,
      lane,
      count: options.folded?.folded.find((f) => f.lane === lane && f.status === status)?.count ?? 0,
    })),
  );
  for (const f of finished) {
    metrics.put(
      { Lane: f.lane, Status: f.status },
      [{ name: QUEUE_METRICS.attemptsFinished, unit: 'Count', value: f.count }],
      at,
    );
  }
  const containerWorkers = workers.filter((w) => w.kind === 'container').length;
  metrics.put(
    {},
    [
      { name: QUEUE_METRICS.containerWorkers, unit: 'Count', value: containerWorkers },
      { name: QUEUE_METRICS.tickStepErrors, unit: 'Count', value: options.stepErrors ?? 0 },
    ],
    at,
  );
  return { lanes, containerWorkers, deadLettered, finished: finished.filter((f) => f.count > 0) };
}

/** Final statuses published as AttemptsFinished (the Prometheus counter's, jobs_attempts_finished_total). */
const FINISHED_STATUSES = ['succeeded', 'failed', 'dead', 'cancelled', 'skipped'] as const;
