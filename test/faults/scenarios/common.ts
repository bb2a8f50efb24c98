/** Job mixes and measurements shared by the scenarios. */
import { nextFireTime, parseCron } from '@jobs/core';
import type { ApiClient, Scenario } from '../harness';
import { percentile, seconds } from '../harness';

export interface JobMix {
  pick(): { jobId: string; payload?: unknown };
  ids: Record<string, string>;
}

/**
 * A mix of the kinds of work users run: a handler that sleeps (so kills and restarts hit attempts in flight), the
 * builtin noop and sleep handlers, and a shell command. Retries start at once (backoff 0) so a recovery time
 * measures the engine, not the job's backoff.
 */
export async function standardMix(
  client: ApiClient,
  random: () => number,
  options: { napMaxMs?: number; tag?: string } = {},
): Promise<JobMix> {
  const tag = options.tag ?? 'mix';
  const backoff = { base_seconds: 0, max_seconds: 0.2, factor: 2, jitter: 'full' };
  const ids = {
    nap: (await client.createJob({ name: `${tag}-nap`, handler: 'nap', max_retries: 5, backoff, timeout_seconds: 30 }))
      .id,
    noop: (await client.createJob({ name: `${tag}-noop`, handler: 'noop', max_retries: 5, backoff })).id,
    sleep: (
      await client.createJob({ name: `${tag}-sleep`, handler: 'sleep', max_retries: 5, backoff, payload: { ms: 50 } })
    ).id,
    command: (
      await client.createJob({ name: `${tag}-echo`, command: 'echo ok', max_retries: 5, backoff, timeout_seconds: 30 })
    ).id,
  };
  const napMaxMs = options.napMaxMs ?? 1500;
  return {
    ids,
    pick() {
      const r = random();
      if (r < 0.55) return { jobId: ids.nap, payload: { ms: 100 + Math.floor(random() * napMaxMs) } };
      if (r < 0.8) return { jobId: ids.noop };
      if (r < 0.95) return { jobId: ids.sleep };
      return { jobId: ids.command };
    },
  };
}

/**
 * Recovery after a worker died at `killedAt`: for each attempt it held as running, the time until the attempt that
 * replaced it started (the retry the reaper created). Attempts the dead worker had already finished are ignored.
 */
export async function replacementDelays(
  s: Scenario,
  orphans: { id: string; killedAt: number }[],
): Promise<{ delays: number[]; detection: number[]; queueing: number[]; missing: string[] }> {
  const out = { delays: [] as number[], detection: [] as number[], queueing: [] as number[], missing: [] as string[] };
  if (orphans.length === 0) return out;
  const rows = await s.q<{
    id: string;
    status: string;
    finished_at: Date | null;
    retry_queued: Date | null;
    retry_started: Date | null;
  }>(
    `SELECT e.id::text, e.status, e.finished_at, r.queued_at AS retry_queued, r.started_at AS retry_started
     FROM executions e LEFT JOIN executions r ON r.retry_of = e.id AND r.trigger = 'retry'
     WHERE e.id = ANY($1::bigint[])`,
    [orphans.map((o) => o.id)],
  );
  const killedAt = new Map(orphans.map((o) => [o.id, o.killedAt]));
  for (const r of rows) {
    if (r.status === 'succeeded') continue; // its outcome went out before the process died
    const at = killedAt.get(r.id)!;
    if (r.finished_at) out.detection.push(r.finished_at.getTime() - at);
    if (!r.retry_started) {
      if (r.status !== 'dead') out.missing.push(r.id);
      continue;
    }
    out.delays.push(r.retry_started.getTime() - at);
    if (r.retry_queued) out.queueing.push(r.retry_started.getTime() - r.retry_queued.getTime());
  }
  return out;
}

export function summarise(delays: number[], what: string): string {
  if (delays.length === 0) return '-';
  return `p50 ${seconds(percentile(delays, 50))} max ${seconds(Math.max(...delays))} (${what}, n=${delays.length})`;
}

/** Running attempts a worker holds according to PostgreSQL. */
export async function runningOf(s: Scenario, workerId: string): Promise<string[]> {
  const rows = await s.q<{ id: string }>(
    `SELECT id::text FROM executions WHERE status = 'running' AND worker_id = $1`,
    [workerId],
  );
  return rows.map((r) => r.id);
}

/**
 * Fire times of cron jobs: every fire time from a job's first (its next_run_at when created) to its last
 * materialised one must exist exactly once
 * (none lost, none duplicated), whatever status it ended in.
 */
export async function checkFireTimes(
  s: Scenario,
  jobs: { id: string; nextRunAt: string }[],
  expected: (jobId: string, first: Date, last: Date) => Date[],
  until?: Date,
): Promise<{ problems: string[]; fireTimes: number; missing: number; duplicates: number }> {
  const problems: string[] = [];
  let fireTimes = 0;
  let missing = 0;
  let duplicates = 0;
  for (const { id: jobId, nextRunAt } of jobs) {
    const rows = await s.q<{ t: Date; n: number }>(
      `SELECT scheduled_for AS t, count(*)::int AS n FROM executions
       WHERE job_id = $1 AND trigger IN ('cron', 'once') GROUP BY 1 ORDER BY 1`,
      [jobId],
    );
    if (rows.length === 0) {
      problems.push(`job ${jobId}: no fire time was materialised`);
      continue;
    }
    const have = new Map(rows.map((r) => [r.t.getTime(), r.n]));
    // From the first fire time the API promised at creation (not the first materialised one, which would hide
    // fire times dropped at the start) to the last materialised one.
    // Up to the last materialised one, or `until` (when the jobs were paused) if that is earlier.
    const last = rows[rows.length - 1]!.t;
    const want = expected(jobId, new Date(nextRunAt), until && until < last ? until : last);
    fireTimes += want.length;
    const lost = want.filter((t) => !have.has(t.getTime()));
    const dup = rows.filter((r) => r.n > 1);
    const wanted = new Set(want.map((t) => t.getTime()));
    const extra = rows.filter((r) => !wanted.has(r.t.getTime()) && (!until || r.t <= until));
    missing += lost.length;
    duplicates += dup.length;
    if (lost.length > 0)
      problems.push(
        `job ${jobId}: ${lost.length} of ${want.length} fire times never materialised (first ${lost[0]!.toISOString()})`,
      );
    if (dup.length > 0) problems.push(`job ${jobId}: ${dup.length} fire times materialised more than once`);
    if (extra.length > 0)
      problems.push(
        `job ${jobId}: ${extra.length} executions at times that are not fire times (first ${extra[0]!.t.toISOString()})`,
      );
  }
  return { problems, fireTimes, missing, duplicates };
}

/** Every fire time of `cronExpr` (UTC) in [first, last]. */
export function cronTimes(cronExpr: string): (jobId: string, first: Date, last: Date) => Date[] {
  const parsed = parseCron(cronExpr, 'UTC');
  if (!parsed.ok) throw new Error(parsed.error);
  return (_jobId, first, last) => {
    const out: Date[] = [];
    let t: Date | null = new Date(first.getTime() - 1);
    while ((t = nextFireTime(parsed.schedule, t)) && t <= last) out.push(t);
    return out;
  };
}
