/**
 * @module retention — the retention pass: deletes finished executions past their retention, in small batches under
 * a time budget, with their roll-up rows and their dead-letter entries. One bounded pass like the reaper; the caller
 * decides how often. Live attempts are never touched (only final statuses are ever selected), and each batch is one
 * short statement that skips rows another transaction holds, so the hot path never waits for it.
 */
import type { CommandQueue, Logger } from './ports';
import type { Lane } from './types';

/** How long finished executions are kept, in ms; null keeps them forever. */
export interface RetentionRules {
  /** Succeeded, cancelled and skipped executions (HISTORY_RETENTION). */
  historyMs: number | null;
  /** Failed and dead ones (DEAD_RETENTION), never less than historyMs. */
  deadMs: number | null;
}

/** One batch of the sweep. */
export interface PruneBatch {
  deleted: { id: string; lane: Lane; status: string }[];
  scanned: number;
  /** Where the next batch starts (rows up to here were looked at). */
  nextAfterId: string;
  /** The scan reached rows too new to have expired, or the end of the table. */
  reachedEnd: boolean;
}

/** A job with a retention of its own shorter than the default sweep's frontier. */
export interface RetentionJob {
  jobId: string;
  retentionMs: number;
}

export interface RetentionStore {
  executionsPrune(input: {
    afterId: string;
    scan: number;
    rules: RetentionRules;
    frontierMs: number;
    jobId?: string;
  }): Promise<PruneBatch>;
  jobsWithShortRetention(input: {
    shorterThanMs: number | null;
    afterJobId: string;
    limit: number;
  }): Promise<RetentionJob[]>;
  /** Deletes expired roll-up rows (the one function that does); returns what they counted, per status. */
  executionMinutesPrune(input: {
    historyMs: number | null;
    deadMs: number | null;
    limit: number;
  }): Promise<Record<string, { count: number; durationMs: number }>>;
}

type RetentionQueue = Pick<CommandQueue, 'forgetDead'>;

export interface RetentionDeps {
  store: RetentionStore;
  queue: RetentionQueue;
  logger: Logger;
}

/**
 * Where the sweep is, kept by the caller between passes (per process; a new process starts over, which costs one
 * walk over the rows kept at the old end). The sweep moves forward only; rows it passed that were kept then (dead
 * ones inside their window, jobs with a longer retention, replays still linked) are looked at again by a rescan
 * from the start every `rescanMs`.
 */
export interface RetentionCursor {
  afterId: string;
  rescanAt: number;
  /** Where the per-job sweep of short-retention jobs continues. */
  afterJobId: string;
}

export const newRetentionCursor = (): RetentionCursor => ({ afterId: '0', rescanAt: 0, afterJobId: '0' });

export interface PruneOptions {
  rules: RetentionRules;
  cursor: RetentionCursor;
  /** Stop starting batches at this instant (ms since the epoch). */
  deadline: number;
  /** Rows read per batch (each batch deletes at most this many). */
  scan?: number;
  rescanMs?: number;
  now?: () => number;
}

export interface PruneResult {
  deleted: number;
  scanned: number;
  batches: number;
  deadLettered: number;
  minutes: number;
}

const DEFAULT_SCAN = 2000;
const DEFAULT_RESCAN_MS = 3_600_000;
/** Short-retention jobs swept per pass at most (the rest continue next pass). */
const JOBS_PER_PASS = 100;

/**
 * One retention pass within `deadline`.
 * @example await pruneOnce(deps, { rules: { historyMs: 30 * DAY, deadMs: 90 * DAY }, cursor, deadline: Date.now() + 1000 })
 */
export async function pruneOnce(deps: RetentionDeps, options: PruneOptions): Promise<PruneResult> {
  const now = options.now ?? Date.now;
  const scan = options.scan ?? DEFAULT_SCAN;
  const { rules, cursor } = options;
  const result: PruneResult = { deleted: 0, scanned: 0, batches: 0, deadLettered: 0, minutes: 0 };
  // Rows queued more recently than this cannot have expired under the default rules (failed and dead ones are
  // kept at least as long as the rest); null: the default keeps everything, only jobs with their own retention expire.
  const frontier = rules.historyMs;

  if (now() >= cursor.rescanAt) {
    cursor.afterId = '0';
    cursor.afterJobId = '0';
    cursor.rescanAt = now() + (options.rescanMs ?? DEFAULT_RESCAN_MS);
    // Roll-up rows expire a minute at a time: once per rescan is often enough.
    const pruned = await deps.store.executionMinutesPrune({
      historyMs: rules.historyMs,
      deadMs: rules.deadMs,
      limit: 10_000,
    });
    result.minutes = Object.values(pruned).reduce((n, p) => n + p.count, 0);
  }

  const batch = async (input: { afterId: string; frontierMs: number; jobId?: string }) => {
    const b = await deps.store.executionsPrune({ ...input, scan, rules });
    result.batches++;
    result.scanned += b.scanned;
    result.deleted += b.deleted.length;
    const dead = b.deleted.filter((d) => d.status === 'dead');
    if (dead.length > 0) {
      try {
        await deps.queue.forgetDead(dead, { oldest: true });
        result.deadLettered += dead.length;
      } catch (error) {
        // The rows are gone; an id left on the list only counts in the queue's dead depth.
        deps.logger.warn({ event: 'retention.dead_letter_failed', count: dead.length, err: String(error) });
      }
    }
    return b;
  };

  if (frontier !== null) {
    while (now() < options.deadline) {
      const b = await batch({ afterId: cursor.afterId, frontierMs: frontier });
      cursor.afterId = b.nextAfterId;
      if (b.reachedEnd) break;
    }
  }

  // Jobs whose own retention ends before the default sweep's frontier: their newer rows, job by job.
  while (now() < options.deadline) {
    const jobs = await deps.store.jobsWithShortRetention({
      shorterThanMs: frontier,
      afterJobId: cursor.afterJobId,
      limit: JOBS_PER_PASS,
    });
    for (const job of jobs) {
      let afterId = '0';
      while (now() < options.deadline) {
        const b = await batch({ afterId, frontierMs: job.retentionMs, jobId: job.jobId });
        afterId = b.nextAfterId;
        if (b.reachedEnd) break;
      }
      if (now() >= options.deadline) break;
      cursor.afterJobId = job.jobId;
    }
    if (jobs.length < JOBS_PER_PASS) {
      if (now() < options.deadline) cursor.afterJobId = '0';
      break;
    }
  }

  if (result.deleted > 0 || result.minutes > 0) deps.logger.info({ event: 'retention.pruned', ...result });
  return result;
}
