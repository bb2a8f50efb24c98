/** @module ports/flow — the ports behind job limits and paused lanes (the semantics are in ../flow.ts). */
import type { FlowLimits, FlowTag, Lane } from '../types';

/** What a claim found besides the ids it leased. */
export type ClaimState = 'ok' | 'paused' | 'restore';

/** A job's limits as the queue needs them; `limits: null` means none (or the job is deleted). */
export interface FlowJob {
  jobId: string;
  limits: FlowLimits | null;
  /** Grows with every change of the job (its updated_at in microseconds): an older copy never overwrites a newer. */
  version: string;
}

export interface LaneState {
  lane: Lane;
  paused: boolean;
  version: string;
}

/** What PostgreSQL knows, to rebuild the queue's flow state after it was lost. */
export interface FlowSnapshot {
  /** Everything: slots and rate windows are written if the queue lost them. False: only `lanes` and `jobs` count. */
  full: boolean;
  lanes: LaneState[];
  jobs: FlowJob[];
  /** Running attempts of limited jobs: each holds a slot. */
  running: (FlowTag & { id: string; lane: Lane })[];
  /** Recent starts of rate-limited jobs (within their period), by bucket (`key` is '' unless the limit is per key). */
  starts: { id: string; jobId: string; key: string; at: Date }[];
}

/** Why attempts of one job wait for a slot, as counted by the queue. */
export interface FlowJobState {
  jobId: string;
  /** Attempts holding a slot of the job (running, or claimed and starting). */
  running: number;
  waiting: { maxConcurrency: number; maxConcurrencyPerKey: number; rateLimit: number };
  /** Key values with attempts waiting, most waiting first. */
  keys: { key: string; running: number; waiting: number }[];
  /** Starts counted in the job's rate window now (job-wide limits only), and when the next one may start. */
  rate: { inWindow: number; nextStartAt: Date | null } | null;
}

export interface FlowStore {
  /**
   * Lane states, and the limits of the jobs named in `jobIds` or changed within `changedWithinMs`; with `full`, also
   * the limits of every live limited job, its running attempts and its recent starts (a lost queue state rebuilt).
   */
  flowSnapshot(input: { jobIds: readonly string[]; full: boolean; changedWithinMs?: number }): Promise<FlowSnapshot>;
  /** The subset of `ids` whose status is final. */
  executionsFinal(ids: readonly string[]): Promise<string[]>;
}

export interface FlowQueue {
  /** Whether the queue lost its flow state, and the jobs it holds attempts of but knows no limits for. */
  flowNeeds(): Promise<{ restore: boolean; unknownJobs: string[] }>;
  /**
   * Writes the snapshot: job limits and lane states always (newer versions only, and attempts parked for unknown
   * limits are let go); slots and rate windows only when the queue had lost its state (`restored` then).
   */
  flowRestore(snapshot: FlowSnapshot): Promise<{ restored: boolean }>;
  /** Frees whatever slots these finished attempts hold, whoever claimed them. */
  flowRelease(ids: readonly string[]): Promise<void>;
}
