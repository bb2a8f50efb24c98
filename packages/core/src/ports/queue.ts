/** @module ports/queue — the whole queue adapter, as entry points, the API and the dashboard use it. */
import type { Lane } from '../types';
import type { CommandQueue } from './commands';
import type { FlowJobState } from './flow';
import type { RecoveryQueue } from './recovery';
import type { WorkerQueue } from './worker';

export type QueueDepth = Record<Lane, { ready: number; delayed: number; running: number; dead: number }>;

/**
 * Everything entry points, the API and the dashboard use of a queue adapter: the Redis one (packages/queue) or the
 * PostgreSQL one (packages/queue-postgres), chosen in functions/ by QUEUE_BACKEND.
 */
export interface QueueAdapter extends WorkerQueue, RecoveryQueue, CommandQueue {
  /** Per lane: ready (attempts of limited jobs not yet checked included), delayed, leased and dead-lettered ids. */
  depth(): Promise<QueueDepth>;
  /** Ids on the dead-letter list of a lane, newest first. */
  deadIds(lane: Lane, limit?: number): Promise<string[]>;
  /** Delayed ids of a lane that come due by `before`. */
  dueCount(input: { lane: Lane; before: Date }): Promise<number>;
  /** Why attempts of these jobs wait (none given: jobs that have attempts waiting, at most 200). */
  flowInspect(jobIds?: readonly string[]): Promise<FlowJobState[]>;
  /** Attempts parked because their job's limits were unknown to the queue (a restore lets them go). */
  flowUnknownCount(): Promise<number>;
  /** Calls `onCancel` with execution ids whose cancellation was requested; returns a function that stops it. */
  subscribeCancels(onCancel: (ids: string[]) => void): Promise<() => Promise<void>>;
  /** Closes the connections the queue opened itself (the client or pool it was given belongs to the caller). */
  close(): Promise<void>;
  ping(): Promise<boolean>;
}
