/** @module transitions — builds the transition records every state change emits. */
import type { CreatedExecution, Outcome, StartedExecution } from './ports';
import type { ExecutionStatus, Transition } from './types';

/** The transition for a row that was just created (`null -> queued | retrying | skipped`). */
export function createdTransition(created: CreatedExecution, at: Date, workerId: string | null = null): Transition {
  return {
    event: 'execution.transition',
    jobId: created.jobId,
    executionId: created.id,
    attempt: created.attempt,
    from: null,
    to: created.status,
    workerId,
    at,
    trigger: created.trigger,
  };
}

/** The status a started execution left: retries wait as `retrying`, everything else as `queued`. */
export function waitingStatus(trigger: StartedExecution['trigger']): ExecutionStatus {
  return trigger === 'retry' ? 'retrying' : 'queued';
}

export function startedTransition(started: StartedExecution, at: Date, workerId: string): Transition {
  return {
    event: 'execution.transition',
    jobId: started.jobId,
    executionId: started.id,
    attempt: started.attempt,
    from: waitingStatus(started.trigger),
    to: 'running',
    workerId,
    at,
    trigger: started.trigger,
  };
}

export function outcomeTransition(outcome: Outcome, at: Date, workerId: string | null): Transition {
  return {
    event: 'execution.transition',
    jobId: outcome.jobId,
    executionId: outcome.id,
    attempt: outcome.attempt,
    from: 'running',
    to: outcome.status,
    workerId,
    at,
    error: outcome.error,
    durationMs: outcome.durationMs,
    exitCode: outcome.exitCode,
  };
}

export function transition(
  fields: Omit<Transition, 'event' | 'at' | 'workerId'> & { at?: Date; workerId?: string | null },
): Transition {
  return { event: 'execution.transition', workerId: null, at: new Date(), ...fields };
}
