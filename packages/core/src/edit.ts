/**
 * @module edit — changing a job in place (PATCH, PUT by name) and backfilling its past fire times, against ports.
 *
 * Semantics (the README's "Editing a job" quotes them):
 * - A change takes effect for every attempt that starts after the edit returns: workers read each claimed attempt
 *   with its job's current version and cache definitions by (job id, version), so no cache outlives an edit.
 * - Attempts already running finish on the version they started with; every execution records `job_version`.
 * - A change of the schedule (cron, time zone, run time, misfire settings, status) recomputes `next_run_at` from now
 *   (keeping a due one the tick has not planned yet) and cancels the fire times materialised for the old schedule
 *   that are still in the future, not started, and not fire times of the new schedule.
 *   The edit holds the job's row lock, like the tick, so no tick plans from the old schedule meanwhile.
 * - A change of lane, priority, limits or payload applies to the attempts not yet started: they are moved in
 *   PostgreSQL under the same lock, and in the queue (taken out of where they wait, pushed again where they belong).
 */
import { auditEntry, fieldChanges, type FieldChanges } from './access';
import { announceCancelled, auditedSpec, checkSpec, pushOrLog, syncLimits, type CommandDeps } from './commands';
import { ConflictError, InvalidInputError, NotFoundError } from './errors';
import { nextFireTime } from './cron';
import { jobSchedule, firstRunAt } from './schedule';
import { createdTransition } from './transitions';
import { instantRangeProblem } from './instant';
import type { CreatedExecution, JobChange, JobSpec } from './ports';
import { isLimited, type Job } from './types';

export type EditDeps = CommandDeps;

/** What a caller computes from the current job: the new definition and what changed (empty: nothing). */
export interface EditPlan {
  spec: JobSpec;
  changes: JobChange[];
  allowPast?: boolean;
}

/** Fields whose change re-plans the schedule (API names). */
const SCHEDULE_FIELDS = [
  'cron_expr',
  'timezone',
  'run_at',
  'misfire',
  'catch_up_max',
  'misfire_deadline_seconds',
  'status',
];
/** Fields whose change moves the attempts that wait. */
const WAITING_FIELDS = [
  'lane',
  'priority',
  'payload',
  'max_concurrency',
  'concurrency_key',
  'max_concurrency_per_key',
  'rate_limit',
];

const EDIT_ATTEMPTS = 5;

/**
 * Changes a job. `plan` is called with the current job (again, should another edit commit in between) and returns
 * the new definition; an edit that changes nothing keeps the version and writes nothing.
 * @example await updateJob(deps, { id: '42', actor: 'api', plan: (job) => ({ spec: { ...job, cronExpr: '*\/10 * * * *' }, changes }) })
 */
export async function updateJob(
  deps: EditDeps,
  input: { id: string; actor: string; plan: (current: Job) => EditPlan },
): Promise<{ job: Job; changed: boolean }> {
  for (let attempt = 1; attempt <= EDIT_ATTEMPTS; attempt++) {
    const current = await deps.store.jobGet(input.id);
    if (!current) throw new NotFoundError('job', input.id);
    const result = await applyPlan(deps, current, input.actor, input.plan(current));
    if (result !== 'stale') return result;
  }
  throw new ConflictError(`job ${input.id} kept changing while this edit was applied; send it again`);
}

/**
 * Creates the job named `name`, or replaces its definition: safe to call from many deploys at once (one job is
 * created; the others find it and compare).
 */
export async function upsertJobByName(
  deps: EditDeps,
  input: { name: string; actor: string; spec: JobSpec; allowPast?: boolean; plan: (current: Job) => EditPlan },
): Promise<{ job: Job; created: boolean; changed: boolean }> {
  for (let attempt = 1; attempt <= EDIT_ATTEMPTS; attempt++) {
    const current = await deps.store.jobGetByName(input.name);
    if (!current) {
      const now = deps.clock.now();
      checkSpec(deps, input.spec, { now, allowPast: input.allowPast ?? false, runAtChanged: true });
      const nextRunAt = (input.spec.status ?? 'active') === 'active' ? firstRunAt(input.spec, now) : null;
      const audit = auditEntry(deps.actor, 'job.create', 'job', fieldChanges(null, auditedSpec(input.spec)));
      const job = await deps.store.jobInsertIfAbsent({ ...input.spec, nextRunAt, actor: input.actor }, audit);
      if (!job) continue; // another caller created it meanwhile: compare with theirs
      if (isLimited(job.limits)) await syncLimits(deps, [job]);
      return { job, created: true, changed: true };
    }
    const result = await applyPlan(deps, current, input.actor, input.plan(current));
    if (result !== 'stale') return { ...result, created: false };
  }
  throw new ConflictError(
    `job ${JSON.stringify(input.name)} kept changing while this request was applied; send it again`,
  );
}

async function applyPlan(
  deps: EditDeps,
  current: Job,
  actor: string,
  plan: EditPlan,
): Promise<{ job: Job; changed: boolean } | 'stale'> {
  if (plan.changes.length === 0) return { job: current, changed: false };
  const now = deps.clock.now();
  const changed = new Set(plan.changes.map((c) => c.field));
  const { spec } = plan;
  checkSpec(deps, spec, { now, allowPast: plan.allowPast ?? false, runAtChanged: changed.has('run_at') });
  const status = spec.status ?? current.status;
  const active = status === 'active';
  const schedule = SCHEDULE_FIELDS.some((f) => changed.has(f))
    ? {
        nextRunAt: active ? firstRunAt(spec, now) : null,
        cancelFrom: now,
        cancelAll: !active,
        isFireTime: active ? fireTimeTest(spec) : () => false,
        keepDue: active && current.status === 'active' && Boolean(current.cronExpr && spec.cronExpr && !spec.runAt),
      }
    : null;
  const result = await deps.store.jobUpdate({
    id: current.id,
    expectedVersion: current.version,
    spec,
    changes: plan.changes,
    actor,
    schedule,
    moveWaiting: WAITING_FIELDS.some((f) => changed.has(f)),
    audit: auditEntry(deps.actor, 'job.update', `job:${current.id}`, asFieldChanges(plan.changes)),
  });
  if (result === 'stale') return 'stale';
  if (!result) throw new NotFoundError('job', current.id);
  await announceCancelled(deps, result.cancelled, 'job edited: its schedule changed');
  if (JSON.stringify(current.limits) !== JSON.stringify(result.job.limits)) await syncLimits(deps, [result.job]);
  if (result.moved.length > 0) {
    try {
      await deps.queue.move(result.moved);
    } catch (error) {
      // Redis then holds them under the old lane or key until the reconciler pushes what PostgreSQL has.
      deps.logger.warn({
        event: 'command.move_failed',
        job_id: current.id,
        count: result.moved.length,
        err: String(error),
      });
    }
  }
  deps.logger.info({
    event: 'job.updated',
    job_id: current.id,
    version: result.job.version,
    actor,
    fields: [...changed],
  });
  return { job: result.job, changed: true };
}

/**
 * Whether an instant is a fire time of `spec`. An edit keeps the queued fire times that still are, so an edit that
 * does not move the fire times (the time zone of an every-second job, the misfire settings) leaves the queue as it
 * was, and quick edits cannot drop a fire time that the tick has not queued again yet.
 */
function fireTimeTest(spec: JobSpec): (at: Date) => boolean {
  if (spec.runAt) return (at) => at.getTime() === spec.runAt!.getTime();
  const schedule = jobSchedule(spec);
  if (!schedule) return () => false;
  return (at) => nextFireTime(schedule, new Date(at.getTime() - 1))?.getTime() === at.getTime();
}

export const MAX_BACKFILL = 1000;

/**
 * The fire times of a job in [from, to) by its own schedule and DST rules, at most MAX_BACKFILL (more: a 400).
 * A one-off job's only fire time is its run time; a manual-only job has none to backfill.
 */
function backfillTimes(job: Pick<Job, 'cronExpr' | 'timezone' | 'runAt'>, from: Date, to: Date): Date[] {
  if (to <= from) throw new InvalidInputError('must be after from', 'to');
  if (job.runAt) return job.runAt >= from && job.runAt < to ? [job.runAt] : [];
  const schedule = jobSchedule(job);
  if (!schedule)
    throw new InvalidInputError('a manual-only job has no fire times to backfill: trigger it instead', 'body');
  const times: Date[] = [];
  let t = nextFireTime(schedule, new Date(from.getTime() - 1));
  while (t && t < to) {
    if (times.length === MAX_BACKFILL) {
      throw new InvalidInputError(
        `the range holds more than ${MAX_BACKFILL} fire times; backfill at most ${MAX_BACKFILL} per call (a shorter range)`,
        'to',
      );
    }
    times.push(t);
    t = nextFireTime(schedule, t);
  }
  return times;
}

/**
 * Creates an execution (trigger "backfill") for each fire time of the job in [from, to) that has none yet; with
 * `dryRun`, only lists them. Either way `existing` says which fire times already have an execution (and so are
 * skipped), as they stood before the call. Backfill covers the past: `to` may not be after now.
 */
export async function backfillJob(
  deps: EditDeps,
  input: { jobId: string; from: Date; to: Date; dryRun: boolean },
): Promise<{ fireTimes: Date[]; existing: { fireTime: Date; executionId: string }[]; created: CreatedExecution[] }> {
  const job = await deps.store.jobGet(input.jobId);
  if (!job) throw new NotFoundError('job', input.jobId);
  const now = deps.clock.now();
  for (const field of ['from', 'to'] as const) {
    const problem = instantRangeProblem(input[field]);
    if (problem) throw new InvalidInputError(problem, field);
  }
  if (input.to.getTime() > now.getTime()) {
    throw new InvalidInputError(
      `is in the future (now ${now.toISOString()}): backfill covers fire times that have passed`,
      'to',
    );
  }
  const fireTimes = backfillTimes(job, input.from, input.to);
  const existing = await deps.store.executionsAtFireTimes({ jobId: job.id, fireTimes });
  if (input.dryRun || fireTimes.length === 0) return { fireTimes, existing, created: [] };
  const audit = auditEntry(deps.actor, 'job.backfill', `job:${job.id}`, {
    range: { old: null, new: `${input.from.toISOString()}/${input.to.toISOString()}` },
  });
  const created = await deps.store.executionsBackfill({ jobId: job.id, fireTimes, audit });
  if (!created) throw new NotFoundError('job', input.jobId);
  if (created.length > 0) {
    deps.sink.emit(
      created.map((c) =>
        deps.actor ? { ...createdTransition(c, now), by: deps.actor.keyName } : createdTransition(c, now),
      ),
    );
    await pushOrLog(deps, created);
  }
  return { fireTimes, existing, created };
}

/** A version's changes as the audit trail keeps them: field to old and new value. */
function asFieldChanges(changes: readonly JobChange[]): FieldChanges {
  return Object.fromEntries(changes.map((c) => [c.field, { old: c.old, new: c.new }]));
}
