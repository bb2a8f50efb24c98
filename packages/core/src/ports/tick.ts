/** @module ports/tick — what the scheduler tick needs of the store. */
import type { ExecutionStatus, Job, QueueItem, Trigger } from '../types';

/** One fire time the planner decided to materialise. */
export interface PlannedFire {
  scheduledFor: Date;
}

export interface FirePlan {
  fires: PlannedFire[];
  /** 1 when missed fire times of this job were dropped by the misfire policy (logged, not enumerated). */
  droppedMisfires: number;
  nextRunAt: Date | null;
}

/** An execution row just created, with what the queue and the log need. */
export interface CreatedExecution extends QueueItem {
  jobId: string;
  attempt: number;
  trigger: Trigger;
  status: ExecutionStatus;
  scheduledFor: Date;
}

export interface MaterialiseResult {
  jobs: number;
  created: CreatedExecution[];
  droppedMisfires: number;
}

export interface TickStore {
  /**
   * In one transaction: claim active jobs with next_run_at <= horizon (FOR UPDATE SKIP LOCKED, at most `limit`),
   * insert the planned fire times (unique per job and fire time), advance next_run_at, commit.
   */
  jobsMaterialiseDue(input: { horizon: Date; limit: number; plan: (job: Job) => FirePlan }): Promise<MaterialiseResult>;
}
