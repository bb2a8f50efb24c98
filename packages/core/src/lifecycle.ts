/** @module lifecycle — the execution state machine: which transitions exist and which states are final. */
import type { ExecutionStatus } from './types';

const ALLOWED: Record<ExecutionStatus, readonly ExecutionStatus[]> = {
  // `null -> queued | retrying | skipped` is creation, not a transition of an existing row.
  queued: ['running', 'cancelled', 'skipped'],
  retrying: ['running', 'cancelled', 'skipped'],
  // running -> failed|dead also covers an expired lease (the reaper records it);
  // running -> queued is a release: a worker shutting down gives back an attempt it could not finish.
  running: ['succeeded', 'failed', 'dead', 'cancelled', 'queued'],
  succeeded: [],
  failed: [],
  dead: [],
  cancelled: [],
  skipped: [],
};

/** True when `from -> to` is a transition the engine may record. */
export function canTransition(from: ExecutionStatus, to: ExecutionStatus): boolean {
  return ALLOWED[from].includes(to);
}

/** True for statuses no transition leaves. `failed` is final for its attempt: the retry is a new execution. */
export function isFinal(status: ExecutionStatus): boolean {
  return ALLOWED[status].length === 0;
}

/** The status a new attempt is born with, by how it was created. */
export function initialStatus(trigger: 'cron' | 'once' | 'manual' | 'retry' | 'replay'): 'queued' | 'retrying' {
  return trigger === 'retry' ? 'retrying' : 'queued';
}
