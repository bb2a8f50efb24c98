/** @module ports/recovery — what the reaper and the reconciler need of the store and the queue. */
import type { Backoff, Lane, QueueItem } from '../types';
import type { Claim } from './basics';
import type { FlowQueue, FlowStore } from './flow';
import type { FinishResult, Outcome } from './worker';

export interface ExpiredExecution {
  id: string;
  token: string;
  jobId: string;
  attempt: number;
  lane: Lane;
  priority: number;
  workerId: string | null;
  maxRetries: number;
  backoff: Backoff;
}

/** A waiting execution as the reaper sees it: where it queues, and what a failed attempt of it would do next. */
export interface WaitingExecution extends QueueItem {
  jobId: string;
  attempt: number;
  maxRetries: number;
  backoff: Backoff;
}

export interface RecoveryStore extends FlowStore {
  /** Running executions whose lease expired by the database clock. */
  executionsLeaseExpired(limit: number): Promise<ExpiredExecution[]>;
  executionsFinish(outcomes: Outcome[]): Promise<FinishResult>;
  /** Queued/retrying executions after `afterId` (keyset), for the reconciler. */
  executionsWaitingPage(input: { afterId: string | null; limit: number }): Promise<QueueItem[]>;
  /** The subset of `ids` still waiting (queued/retrying), with their queue placement and retry settings. */
  executionsWaiting(ids: readonly string[]): Promise<WaitingExecution[]>;
  /** Records a lost delivery on each of these attempts still waiting with no start (their claim expired unstarted). */
  executionsDeliveryLost(ids: readonly string[]): Promise<void>;
}

export interface RecoveryQueue extends FlowQueue {
  /** Of these claims, the ids whose Redis lease is still live under the same token (their worker is heartbeating). */
  leasesHeld(input: { lane: Lane; claims: Claim[] }): Promise<Set<string>>;
  /** Removes and returns ids whose Redis lease expired (by the Redis clock), with how often each was claimed. */
  reapExpired(input: { lane: Lane; limit: number }): Promise<{ id: string; deliveries: number }[]>;
  /** Pushes the items Redis does not hold anywhere (ready, delayed or leased); returns how many were pushed. */
  ensure(items: readonly QueueItem[]): Promise<number>;
  settle(input: { lane: Lane; acks: Claim[]; dead: string[]; push: QueueItem[] }): Promise<void>;
  push(items: readonly QueueItem[]): Promise<void>;
}
