/**
 * @module metrics/series — the system-wide series of GET /metrics, from one read of PostgreSQL (live rows and the
 * roll-ups, packages/store/src/metrics.ts) and Redis (ZCARD/LLEN per lane). Every label combination is written,
 * zeros included, so a series exists before its first event and `increase()` sees that event.
 */
import { LANES, LIVE_STATUSES, type WorkerInfo } from '@jobs/core';
import { DURATION_BOUNDS_MS, LATENESS_BOUNDS_MS, type FinishedTotals, type MetricsSnapshot } from '@jobs/store';
import { SnapshotRegistry, type HistogramValues } from './snapshot';

const FINAL_STATUSES = ['succeeded', 'failed', 'dead', 'cancelled', 'skipped'] as const;
const WORKER_KINDS = ['lambda', 'container', 'local'] as const;
type QueueDepth = Record<string, { ready: number; delayed: number; running: number; dead: number }>;

export interface SeriesInput {
  snapshot: MetricsSnapshot;
  depth: QueueDepth;
  workers: WorkerInfo[];
}

function histogramByLane(
  finished: FinishedTotals[],
  pick: (f: FinishedTotals) => { le: number[] | null; sumMs: number },
  bounds: readonly number[],
): HistogramValues[] {
  return LANES.map((lane) => {
    const le = new Array<number>(bounds.length + 1).fill(0);
    let sumMs = 0;
    for (const f of finished) {
      if (f.lane !== lane) continue;
      const { le: counts, sumMs: s } = pick(f);
      if (!counts) continue;
      counts.forEach((n, i) => (le[i] = (le[i] ?? 0) + n));
      sumMs += s;
    }
    return { labels: { lane }, le: le.slice(0, bounds.length), count: le[bounds.length] ?? 0, sum: sumMs / 1000 };
  });
}

/** The registry of one scrape's system-wide series. */
export function systemSeries(input: SeriesInput): SnapshotRegistry {
  const { snapshot, depth, workers } = input;
  const out = new SnapshotRegistry();
  const seconds = (bounds: readonly number[]) => bounds.map((ms) => ms / 1000);

  out.gauge(
    'jobs_queue_depth',
    'Ids in Redis per lane: ready to claim, delayed (due later), leased (running or starting), dead-lettered.',
    LANES.flatMap((lane) => {
      const d = depth[lane] ?? { ready: 0, delayed: 0, running: 0, dead: 0 };
      return [
        { labels: { lane, state: 'ready' }, value: d.ready },
        { labels: { lane, state: 'delayed' }, value: d.delayed },
        { labels: { lane, state: 'leased' }, value: d.running },
        { labels: { lane, state: 'dead' }, value: d.dead },
      ];
    }),
  );
  out.gauge(
    'jobs_executions',
    'Executions in a live status, per lane (PostgreSQL).',
    LANES.flatMap((lane) =>
      LIVE_STATUSES.map((status) => ({
        labels: { status, lane },
        value: snapshot.live.find((l) => l.status === status && l.lane === lane)?.count ?? 0,
      })),
    ),
  );
  out.gauge(
    'jobs_oldest_waiting_seconds',
    'How long the oldest due execution that has not started has waited, per lane (0 when none waits).',
    LANES.map((lane) => ({ labels: { lane }, value: (snapshot.oldestWaitingMs[lane] ?? 0) / 1000 })),
  );
  out.counter(
    'jobs_attempts_finished_total',
    'Attempts that reached a final status, per lane; monotonic whatever retention deletes.',
    LANES.flatMap((lane) =>
      FINAL_STATUSES.map((status) => ({
        labels: { status, lane },
        value: snapshot.finished.find((f) => f.status === status && f.lane === lane)?.count ?? 0,
      })),
    ),
  );
  out.histogram(
    'jobs_attempt_duration_seconds',
    'Run time of attempts that ran to an outcome (succeeded, failed, dead), per lane, system-wide.',
    seconds(DURATION_BOUNDS_MS),
    histogramByLane(snapshot.finished, (f) => ({ le: f.durationLe, sumMs: f.durationMsSum }), DURATION_BOUNDS_MS),
  );
  out.histogram(
    'jobs_schedule_lateness_seconds',
    'Start minus scheduled time of cron and one-off runs, per lane, system-wide (counted when the attempt finishes).',
    seconds(LATENESS_BOUNDS_MS),
    histogramByLane(snapshot.finished, (f) => ({ le: f.latenessLe, sumMs: f.latenessMsSum }), LATENESS_BOUNDS_MS),
  );
  out.gauge(
    'jobs_workers',
    'Workers that heartbeated recently, per kind.',
    WORKER_KINDS.map((kind) => ({ labels: { kind }, value: workers.filter((w) => w.kind === kind).length })),
  );
  out.gauge(
    'jobs_worker_slots',
    'Attempt slots of those workers, busy or free, as of their last heartbeat.',
    WORKER_KINDS.flatMap((kind) => {
      const of = workers.filter((w) => w.kind === kind);
      const busy = of.reduce((n, w) => n + Math.min(w.inFlight, w.concurrency), 0);
      const total = of.reduce((n, w) => n + w.concurrency, 0);
      return [
        { labels: { kind, state: 'busy' }, value: busy },
        { labels: { kind, state: 'free' }, value: total - busy },
      ];
    }),
  );
  return out;
}
