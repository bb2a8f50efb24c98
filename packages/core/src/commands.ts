/**
 * @module commands — what users ask for (create, trigger, cancel, replay, pause, resume, delete), against ports.
 * Each writes PostgreSQL first, then tells Redis; a failed Redis call is repaired by the reconciler.
 */
import { auditEntry, fieldChanges, type Actor } from './access';
import { IdempotencyMismatchError, InvalidInputError, NotFoundError } from './errors';
import { flowJobOf } from './flow';
import type {
  ChangedExecution,
  Clock,
  CommandQueue,
  CommandStore,
  CreatedExecution,
  JobSpec,
  LaneState,
  Logger,
  TransitionSink,
} from './ports';
import { firstRunAt } from './schedule';
import { createdTransition, transition } from './transitions';
import { instantRangeProblem } from './instant';
import {
  isLimited,
  type Transition,
  type Execution,
  type ExecutionStatus,
  type Job,
  type Lane,
  type QueueItem,
} from './types';

export interface CommandDeps {
  store: CommandStore;
  queue: CommandQueue;
  clock: Clock;
  sink: TransitionSink;
  logger: Logger;
  /** False: jobs with a command are refused (COMMAND_JOBS=off). Default true. */
  commandJobs?: boolean;
  /** Who asks (set per request by the API and the dashboard): each change is audited under this key name. */
  actor?: Actor;
}

/** A one-off `runAt` this far behind the clock still counts as "now" (a client's "now" arrives a little late). */
const RUN_AT_PAST_TOLERANCE_MS = 5_000;

const COMMAND_JOBS_OFF = 'command jobs are disabled on this deployment (COMMAND_JOBS=off): use a handler';

/**
 * Creates a job. A one-off run time in the past is refused unless `allowPast` (it would run at once, or be dropped
 * as a misfire by the `skip` policy): a typo in a date must not run a job by surprise.
 */
export async function createJob(
  deps: CommandDeps,
  spec: JobSpec,
  options: { allowPast?: boolean; actor?: string } = {},
): Promise<Job> {
  const now = deps.clock.now();
  checkSpec(deps, spec, { now, allowPast: options.allowPast ?? false, runAtChanged: true });
  const nextRunAt = (spec.status ?? 'active') === 'active' ? firstRunAt(spec, now) : null;
  const job = await deps.store.jobInsert(
    { ...spec, nextRunAt, actor: options.actor ?? deps.actor?.keyName ?? 'api' },
    auditEntry(deps.actor, 'job.create', 'job', fieldChanges(null, auditedSpec(spec))),
  );
  if (isLimited(job.limits)) await syncLimits(deps, [job]);
  return job;
}

/** The checks of a definition that need more than its own fields: the deployment's settings and the clock. */
export function checkSpec(
  deps: CommandDeps,
  spec: JobSpec,
  options: { now: Date; allowPast: boolean; runAtChanged: boolean },
): void {
  if (spec.command !== null && deps.commandJobs === false) throw new InvalidInputError(COMMAND_JOBS_OFF, 'command');
  const { now } = options;
  const runAtProblem = spec.runAt && options.runAtChanged ? instantRangeProblem(spec.runAt) : null;
  if (runAtProblem) throw new InvalidInputError(runAtProblem, 'run_at');
  if (
    spec.runAt &&
    options.runAtChanged &&
    !options.allowPast &&
    spec.runAt.getTime() < now.getTime() - RUN_AT_PAST_TOLERANCE_MS
  ) {
    throw new InvalidInputError(
      `is in the past (${spec.runAt.toISOString()}, now ${now.toISOString()}); send "allow_past": true to run it once right away`,
      'run_at',
    );
  }
}

/**
 * Tells the queue a job's current limits (after a create or an edit), so they apply to its waiting attempts at their
 * next claim. A failure loses nothing: a claim that finds no limits for a job asks PostgreSQL, and the reconciler
 * copies the limits of every recently changed job.
 */
export async function syncLimits(deps: CommandDeps, jobs: readonly Job[]): Promise<void> {
  if (jobs.length === 0) return;
  const changed = jobs.map(flowJobOf);
  try {
    await deps.queue.flowRestore({ full: false, lanes: [], jobs: changed, running: [], starts: [] });
  } catch (error) {
    deps.logger.warn({ event: 'command.limits_sync_failed', job_ids: changed.map((j) => j.jobId), err: String(error) });
  }
}

/**
 * After an edit of a job's limits: the queue gets the new numbers (they apply to the attempts already waiting), and
 * when the job gained or lost its limits, or its concurrency key changed, its waiting attempts are queued again
 * under their new key value (running ones finish under the old).
 * @example await limitsChanged(deps, before, after)
 */
export async function limitsChanged(deps: CommandDeps, before: Job, after: Job): Promise<void> {
  const b = before.limits;
  const a = after.limits;
  const same = JSON.stringify(b) === JSON.stringify(a);
  if (same) return;
  await syncLimits(deps, [after]);
  if (isLimited(b) === isLimited(a) && b.concurrencyKey === a.concurrencyKey) return;
  const items = await deps.store.executionsRetag(after.id);
  if (items.length === 0) return;
  try {
    await deps.queue.withdraw(items.map((i) => ({ ...i, running: false })));
    await deps.queue.push(items);
  } catch (error) {
    // Those withdrawn but not pushed again are pushed by the reconciler.
    deps.logger.warn({ event: 'command.requeue_failed', job_id: after.id, count: items.length, err: String(error) });
  }
}

/**
 * Pauses or resumes a lane: a paused lane starts nothing new (triggers are accepted and queue up, running attempts
 * finish). PostgreSQL records it first; should the copy to Redis fail, the reconciler repeats it.
 */
export async function setLanePaused(
  deps: CommandDeps,
  lane: Lane,
  paused: boolean,
): Promise<LaneState & { pausedAt: Date | null }> {
  const state = await deps.store.laneSetPaused(
    { lane, paused },
    auditEntry(deps.actor, paused ? 'lane.pause' : 'lane.resume', `lane:${lane}`),
  );
  try {
    await deps.queue.flowRestore({ full: false, lanes: [state], jobs: [], running: [], starts: [] });
  } catch (error) {
    deps.logger.warn({ event: 'command.lane_sync_failed', lane, err: String(error) });
  }
  deps.logger.info({ event: paused ? 'lane.paused' : 'lane.resumed', lane, ...actorFields(deps.actor) });
  return state;
}

export async function triggerJob(
  deps: CommandDeps,
  input: { jobId: string; payload?: unknown; idempotencyKey?: string | null; traceparent?: string | null },
): Promise<{ execution: CreatedExecution; record: Execution; created: boolean }> {
  const result = await deps.store.executionTrigger({
    jobId: input.jobId,
    payload: input.payload ?? null,
    idempotencyKey: input.idempotencyKey ?? null,
    audit: auditEntry(deps.actor, 'job.trigger', `job:${input.jobId}`),
    traceparent: input.traceparent ?? null,
  });
  if (!result) throw new NotFoundError('job', input.jobId);
  if (!result.created && result.samePayload === false) throw new IdempotencyMismatchError(result.record.id);
  if (result.created) {
    deps.sink.emit([withActor(createdTransition(result.execution, deps.clock.now()), deps.actor)]);
    await pushOrLog(deps, [result.execution]);
  }
  return result;
}

/** Cancels a queued, retrying or running attempt; a running command is killed by its worker. */
export async function cancelExecution(
  deps: CommandDeps,
  id: string,
): Promise<{ cancelled: boolean; status: ExecutionStatus }> {
  const result = await deps.store.executionCancel(id, auditEntry(deps.actor, 'execution.cancel', `execution:${id}`));
  if (!result) throw new NotFoundError('execution', id);
  if (result.changed) await announceCancelled(deps, [result.changed], 'cancelled by request');
  return { cancelled: result.changed !== null, status: result.status };
}

/**
 * Re-runs a dead or failed execution as a new attempt chain, once. Null execution: it was not dead or failed, or it
 * was replayed before (`replayedBy`) and `force` was not given.
 */
export async function replayExecution(
  deps: CommandDeps,
  id: string,
  options: { force?: boolean } = {},
): Promise<{ execution: CreatedExecution | null; status: ExecutionStatus; replayedBy: string | null }> {
  const result = await deps.store.executionReplay(id, {
    ...options,
    audit: auditEntry(deps.actor, 'execution.replay', `execution:${id}`),
  });
  if (!result) throw new NotFoundError('execution', id);
  if (result.execution) {
    deps.sink.emit([withActor(createdTransition(result.execution, deps.clock.now()), deps.actor)]);
    await pushOrLog(deps, [result.execution]);
    if (result.status === 'dead') {
      await deps.queue.forgetDead([{ id, lane: result.execution.lane }]).catch(() => undefined);
    }
  }
  return result;
}

export async function pauseJob(deps: CommandDeps, id: string): Promise<Job> {
  const result = await deps.store.jobSetStatus(
    { id, status: 'paused', nextRunAt: null },
    auditEntry(deps.actor, 'job.pause', `job:${id}`),
  );
  if (!result) throw new NotFoundError('job', id);
  await announceCancelled(deps, result.cancelled, 'job paused');
  return result.job;
}

/** Resumes scheduling from now: fire times missed while paused are not run (no burst). */
export async function resumeJob(deps: CommandDeps, id: string): Promise<Job> {
  const job = await deps.store.jobGet(id);
  if (!job) throw new NotFoundError('job', id);
  const now = deps.clock.now();
  const nextRunAt = job.runAt ? (job.lastRunAt ? null : job.runAt) : firstRunAt(job, now);
  const result = await deps.store.jobSetStatus(
    { id, status: 'active', nextRunAt },
    auditEntry(deps.actor, 'job.resume', `job:${id}`),
  );
  if (!result) throw new NotFoundError('job', id);
  return result.job;
}

export async function deleteJob(deps: CommandDeps, id: string): Promise<void> {
  const result = await deps.store.jobDelete(
    id,
    auditEntry(deps.actor, 'job.delete', `job:${id}`, { deleted: { old: false, new: true } }),
  );
  if (!result) throw new NotFoundError('job', id);
  await announceCancelled(deps, result.cancelled, 'job deleted');
}

export async function announceCancelled(deps: CommandDeps, changed: ChangedExecution[], reason: string): Promise<void> {
  if (changed.length === 0) return;
  const at = deps.clock.now();
  deps.sink.emit(
    changed.map((c) =>
      withActor(
        transition({
          jobId: c.jobId,
          executionId: c.id,
          attempt: c.attempt,
          from: c.from,
          to: c.to,
          workerId: c.workerId,
          at,
          error: reason,
        }),
        deps.actor,
      ),
    ),
  );
  try {
    await deps.queue.withdraw(changed.map((c) => ({ ...c, running: c.from === 'running' })));
  } catch (error) {
    // Workers drop cancelled ids when PostgreSQL refuses to start them, and notice at their next heartbeat.
    deps.logger.warn({ event: 'command.withdraw_failed', count: changed.length, err: String(error) });
  }
}

export async function pushOrLog(deps: CommandDeps, items: QueueItem[]): Promise<void> {
  try {
    await deps.queue.push(items);
  } catch (error) {
    deps.logger.warn({ event: 'command.push_failed', count: items.length, err: String(error) });
  }
}

/** A job's definition as the audit trail records it at create (the store masks secret-looking payload fields). */
export function auditedSpec(spec: JobSpec): Record<string, unknown> {
  const {
    name,
    cronExpr,
    timezone,
    runAt,
    command,
    handler,
    payload,
    status,
    lane,
    priority,
    maxRetries,
    timeoutMs,
    overlap,
    misfire,
  } = spec;
  return {
    name,
    cronExpr,
    timezone,
    runAt: runAt?.toISOString() ?? null,
    command,
    handler,
    payload,
    status: status ?? 'active',
    lane,
    priority,
    maxRetries,
    timeoutMs,
    overlap,
    misfire,
    limits: spec.limits ?? null,
  };
}

/** Log fields naming the key behind a command. */
function actorFields(actor: Actor | undefined): { key?: string } {
  return actor ? { key: actor.keyName } : {};
}

/** A transition caused by a request carries the key name that asked for it (logs and bus events). */
function withActor<T extends Transition>(t: T, actor: Actor | undefined): T {
  return actor ? { ...t, by: actor.keyName } : t;
}
