/**
 * @module schedule — decides which fire times of a job the tick materialises, applying the misfire policy.
 *
 * A fire time is *missed* when it is older than `now - graceMs` by the time a tick first sees it (the scheduler was
 * down, or the job was created with a past `run_at`). Policies:
 * - `skip`: missed fire times are dropped; the job runs at its next regular time.
 * - `run_once` (default): one run for all missed fire times, scheduled for the latest of them (it starts now);
 *   none if a regular fire time is due now anyway (that run covers the missed ones).
 * - `catch_up`: every missed fire time runs, the most recent `catchUpMax` of them.
 * Whatever the policy, a missed fire time older than `misfireDeadlineMs` is dropped.
 * Fire times are never enumerated one by one across a long outage: the latest missed ones are found backwards.
 */
import { nextFireTime, parseCron, prevFireTime, type CronSchedule } from './cron';
import type { FirePlan, PlannedFire } from './ports';
import type { Job } from './types';

/** Upper bound on fire times one job materialises in one tick (a 1-second schedule with a 70 s lookahead is 70). */
const MAX_FIRES_PER_TICK = 1000;

const scheduleCache = new Map<string, CronSchedule>();

/** Parsed schedule for a stored job; a job's expression was validated when it was saved. */
export function jobSchedule(job: Pick<Job, 'cronExpr' | 'timezone'>): CronSchedule | null {
  if (!job.cronExpr) return null;
  const key = `${job.timezone}\u0000${job.cronExpr}`;
  let schedule = scheduleCache.get(key);
  if (!schedule) {
    const parsed = parseCron(job.cronExpr, job.timezone);
    if (!parsed.ok) return null;
    schedule = parsed.schedule;
    if (scheduleCache.size > 10_000) scheduleCache.clear();
    scheduleCache.set(key, schedule);
  }
  return schedule;
}

/** The first fire time of a job strictly after `after`: what `next_run_at` starts as (and resumes from). */
export function firstRunAt(job: Pick<Job, 'cronExpr' | 'timezone' | 'runAt'>, after: Date): Date | null {
  if (job.runAt) return job.runAt;
  const schedule = jobSchedule(job);
  return schedule ? nextFireTime(schedule, after) : null;
}

export interface PlanOptions {
  now: Date;
  horizon: Date;
  graceMs: number;
}

/**
 * Plans one job's fire times up to `horizon`.
 * @example planFires(job, { now, horizon: new Date(+now + 70_000), graceMs: 60_000 })
 */
export function planFires(job: Job, { now, horizon, graceMs }: PlanOptions): FirePlan {
  const start = job.nextRunAt;
  if (!start) return { fires: [], droppedMisfires: 0, nextRunAt: null };
  const cutoff = new Date(now.getTime() - graceMs);
  const deadline = job.misfireDeadlineMs === null ? null : new Date(now.getTime() - job.misfireDeadlineMs);
  const withinDeadline = (t: Date) => deadline === null || t >= deadline;

  if (job.runAt || !job.cronExpr) {
    // One-off: next_run_at is the run_at instant.
    if (start > horizon) return { fires: [], droppedMisfires: 0, nextRunAt: start };
    const missed = start < cutoff;
    const keep = !missed || (job.misfire !== 'skip' && withinDeadline(start));
    return { fires: keep ? [{ scheduledFor: start }] : [], droppedMisfires: keep ? 0 : 1, nextRunAt: null };
  }

  const schedule = jobSchedule(job);
  if (!schedule) return { fires: [], droppedMisfires: 0, nextRunAt: null };

  // Regular fire times: from max(start, cutoff) up to the horizon.
  const regular: PlannedFire[] = [];
  let t: Date | null = start >= cutoff ? start : nextFireTime(schedule, new Date(cutoff.getTime() - 1));
  while (t && t <= horizon && regular.length < MAX_FIRES_PER_TICK) {
    regular.push({ scheduledFor: t });
    t = nextFireTime(schedule, t);
  }
  const fires: PlannedFire[] = [];
  let droppedMisfires = 0;
  if (start < cutoff) {
    const dueNow = regular.length > 0 && regular[0]!.scheduledFor <= now;
    const quota = job.misfire === 'catch_up' ? job.catchUpMax : job.misfire === 'run_once' && !dueNow ? 1 : 0;
    const missed = quota > 0 ? latestMissed(schedule, start, cutoff, quota).filter(withinDeadline) : [];
    for (const m of missed) fires.push({ scheduledFor: m });
    // Counted per job: the slots themselves are never enumerated across a long outage.
    if (missed.length < Math.max(quota, 1)) droppedMisfires = 1;
  }
  fires.push(...regular);
  return { fires, droppedMisfires, nextRunAt: t };
}

/** Up to `max` most recent fire times in [start, cutoff), oldest first, found by walking back from the cutoff. */
function latestMissed(schedule: CronSchedule, start: Date, cutoff: Date, max: number): Date[] {
  const found: Date[] = [];
  let t = prevFireTime(schedule, cutoff);
  while (t && t >= start && found.length < max) {
    found.push(t);
    t = prevFireTime(schedule, t);
  }
  return found.reverse();
}
