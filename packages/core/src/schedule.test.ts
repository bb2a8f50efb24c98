import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from './retry';
import { firstRunAt, planFires } from './schedule';
import { NO_LIMITS, type Job } from './types';

const T = (iso: string) => new Date(iso);
const iso = (ds: { scheduledFor: Date }[]) => ds.map((d) => d.scheduledFor.toISOString());

function job(overrides: Partial<Job> = {}): Job {
  return {
    id: '1',
    name: 'j',
    cronExpr: '*/1 * * * *',
    timezone: 'UTC',
    runAt: null,
    command: 'true',
    handler: null,
    http: null,
    lambda: null,
    payload: null,
    env: null,
    status: 'active',
    maxRetries: 0,
    backoff: DEFAULT_BACKOFF,
    timeoutMs: 1000,
    overlap: 'allow',
    misfire: 'run_once',
    catchUpMax: 10,
    misfireDeadlineMs: null,
    retentionDays: null,
    lane: 'short',
    priority: 0,
    limits: NO_LIMITS,
    managedBy: null,
    version: 1,
    nextRunAt: T('2025-06-01T12:01:00Z'),
    lastRunAt: null,
    createdAt: T('2025-06-01T12:00:00Z'),
    updatedAt: T('2025-06-01T12:00:00Z'),
    ...overrides,
  };
}

// The scheduler was down from 12:00:30 until 12:10:30; the job fires every minute.
const down = { now: T('2025-06-01T12:10:30Z'), horizon: T('2025-06-01T12:11:30Z'), graceMs: 20_000 };

describe('misfire policy', () => {
  it('skip: drops every missed fire time and resumes at the next regular one', () => {
    const plan = planFires(job({ misfire: 'skip' }), down);
    expect(iso(plan.fires)).toEqual(['2025-06-01T12:11:00.000Z']);
    expect(plan.nextRunAt!.toISOString()).toBe('2025-06-01T12:12:00.000Z');
    expect(plan.droppedMisfires).toBe(1);
  });

  it('run_once: one run for all the missed fire times, scheduled for the latest of them', () => {
    const plan = planFires(job({ misfire: 'run_once' }), down);
    expect(iso(plan.fires)).toEqual(['2025-06-01T12:10:00.000Z', '2025-06-01T12:11:00.000Z']);
  });

  it('run_once: no extra run when a regular fire time is due now anyway', () => {
    const plan = planFires(job({ misfire: 'run_once' }), { ...down, now: T('2025-06-01T12:10:05Z'), graceMs: 2000 });
    // 12:10:00 is 5 s old (past the 2 s grace); nothing else is due now, so the latest missed one runs.
    expect(iso(plan.fires)[0]).toBe('2025-06-01T12:10:00.000Z');
    const covered = planFires(job({ misfire: 'run_once' }), {
      ...down,
      now: T('2025-06-01T12:10:05Z'),
      graceMs: 10_000,
    });
    // With a 10 s grace 12:10:00 is a regular, on-time run: it covers the missed ones.
    expect(iso(covered.fires)).toEqual(['2025-06-01T12:10:00.000Z', '2025-06-01T12:11:00.000Z']);
  });

  it('catch_up: every missed fire time, the most recent catchUpMax of them', () => {
    const plan = planFires(job({ misfire: 'catch_up', catchUpMax: 3 }), down);
    expect(iso(plan.fires)).toEqual([
      '2025-06-01T12:08:00.000Z',
      '2025-06-01T12:09:00.000Z',
      '2025-06-01T12:10:00.000Z',
      '2025-06-01T12:11:00.000Z',
    ]);
  });

  it('drops missed fire times older than the deadline, whatever the policy', () => {
    const plan = planFires(job({ misfire: 'catch_up', catchUpMax: 100, misfireDeadlineMs: 150_000 }), down);
    expect(iso(plan.fires)).toEqual([
      '2025-06-01T12:08:00.000Z',
      '2025-06-01T12:09:00.000Z',
      '2025-06-01T12:10:00.000Z',
      '2025-06-01T12:11:00.000Z',
    ]);
    const none = planFires(job({ misfire: 'run_once', misfireDeadlineMs: 10_000 }), down);
    expect(iso(none.fires)).toEqual(['2025-06-01T12:11:00.000Z']);
  });

  it('never enumerates a long outage slot by slot', () => {
    const everySecond = job({
      cronExpr: '* * * * * *',
      nextRunAt: T('2024-01-01T00:00:00Z'),
      misfire: 'catch_up',
      catchUpMax: 5,
    });
    const started = performance.now();
    const plan = planFires(everySecond, {
      now: T('2025-06-01T00:00:00Z'),
      horizon: T('2025-06-01T00:00:02Z'),
      graceMs: 1000,
    });
    expect(performance.now() - started).toBeLessThan(5000); // enumerating 44 million seconds would take minutes
    expect(plan.fires.length).toBe(5 + 4); // 5 caught up; 23:59:59 (within the grace) to 00:00:02 regular
  });
});

describe('one-off jobs', () => {
  it('run_at becomes the single fire time and then nothing', () => {
    const once = job({ cronExpr: null, runAt: T('2025-06-01T12:00:45Z'), nextRunAt: T('2025-06-01T12:00:45Z') });
    const plan = planFires(once, {
      now: T('2025-06-01T12:00:30Z'),
      horizon: T('2025-06-01T12:01:00Z'),
      graceMs: 60_000,
    });
    expect(iso(plan.fires)).toEqual(['2025-06-01T12:00:45.000Z']);
    expect(plan.nextRunAt).toBeNull();
  });

  it('a one-off missed during downtime still runs once, unless its policy is skip', () => {
    const once = job({ cronExpr: null, runAt: T('2025-06-01T11:00:00Z'), nextRunAt: T('2025-06-01T11:00:00Z') });
    expect(planFires(once, down).fires).toHaveLength(1);
    expect(planFires({ ...once, misfire: 'skip' }, down).fires).toHaveLength(0);
  });
});

describe('firstRunAt', () => {
  it('is the first fire time strictly after the given instant, in the job time zone', () => {
    const at = firstRunAt(
      { cronExpr: '30 2 * * *', timezone: 'America/New_York', runAt: null },
      T('2025-03-08T12:00:00Z'),
    );
    expect(at!.toISOString()).toBe('2025-03-09T07:30:00.000Z'); // 02:30 does not exist that night: shifted to 03:30 EDT
  });
});
