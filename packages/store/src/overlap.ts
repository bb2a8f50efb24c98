/**
 * @module overlap — starting executions of jobs whose overlap policy is `forbid` or `replace`.
 *
 * Both policies need to know what else of the same job is running, which is only reliable while holding the job
 * row's lock: two workers starting two runs of one job at once would otherwise each miss the other. Job rows are
 * locked in id order so concurrent starts cannot deadlock. Decisions, per job, in fire-time order:
 * - forbid: if a run is already running (or an earlier one in this batch starts), this one is recorded `skipped`.
 * - replace: the running ones are cancelled (their workers kill them) and the newest waiting one starts; older
 *   waiting ones in the same batch are `skipped`.
 */
import type { Claim, Lane, OverlapPolicy, StartResult, Trigger } from '@jobs/core';
import type pg from 'pg';
import { START_SQL, toStarted, type StartedRow, type TraceRead } from './started';
import { countInMinutes } from './minutes';
import { transaction } from './transaction';

/** An execution claimed to start, with its job's overlap policy. */
interface CandidateRow {
  id: string;
  job_id: string;
  attempt: number;
  trigger: Trigger;
  lane: Lane;
  scheduled_for: Date;
  overlap: OverlapPolicy;
}

/** A running execution of one of the candidates' jobs. */
interface RunningRow {
  id: string;
  job_id: string;
  attempt: number;
  worker_id: string | null;
}

export async function startWithOverlap(
  pool: pg.Pool,
  input: { workerId: string; leaseMs: number; claims: Claim[] },
  read: TraceRead,
): Promise<StartResult> {
  const result: StartResult = { started: [], skipped: [], notStarted: [], replaced: [] };
  if (input.claims.length === 0) return result;
  const tokens = new Map(input.claims.map((c) => [c.id, c.token]));
  return transaction(pool, async (client) => {
    const candidates = (
      await client.query<CandidateRow>(
        `SELECT e.id, e.job_id, e.attempt, e.trigger, e.lane, e.scheduled_for, j.overlap
         FROM executions e JOIN jobs j ON j.id = e.job_id
         WHERE e.id = ANY($1::bigint[]) AND e.status IN ('queued', 'retrying')`,
        [input.claims.map((c) => c.id)],
      )
    ).rows;
    const candidateIds = new Set(candidates.map((c) => c.id));
    result.notStarted = input.claims.filter((c) => !candidateIds.has(c.id)).map((c) => c.id);
    if (candidates.length === 0) return result;
    const jobIds = [...new Set(candidates.map((c) => c.job_id))];
    await client.query(`SELECT id FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`, [jobIds]);
    const running = (
      await client.query<RunningRow>(
        `SELECT id, job_id, attempt, worker_id FROM executions WHERE job_id = ANY($1::bigint[]) AND status = 'running'`,
        [jobIds],
      )
    ).rows;

    const toStart: CandidateRow[] = [];
    const toSkip: { row: CandidateRow; reason: string }[] = [];
    const toCancel: (RunningRow & { by: string })[] = [];
    const byJob = new Map<string, CandidateRow[]>();
    for (const c of candidates) byJob.set(c.job_id, [...(byJob.get(c.job_id) ?? []), c]);
    for (const [jobId, rows] of byJob) {
      rows.sort((a, b) => a.scheduled_for.getTime() - b.scheduled_for.getTime() || Number(BigInt(a.id) - BigInt(b.id)));
      const live = running.filter((r) => r.job_id === jobId);
      const policy: string = rows[0]!.overlap;
      if (policy === 'forbid') {
        let busy = live.length > 0;
        for (const row of rows) {
          if (busy)
            toSkip.push({ row, reason: 'skipped: the previous run of this job was still running (overlap: forbid)' });
          else {
            toStart.push(row);
            busy = true;
          }
        }
      } else if (policy === 'replace') {
        const newest = rows[rows.length - 1]!;
        for (const row of rows.slice(0, -1))
          toSkip.push({ row, reason: `skipped: replaced by execution ${newest.id} (overlap: replace)` });
        toStart.push(newest);
        toCancel.push(...live.map((r) => ({ ...r, by: newest.id })));
      } else {
        toStart.push(...rows);
      }
    }

    if (toCancel.length > 0) {
      const cancelled = await client.query<RunningRow>(
        `WITH changed AS (
           UPDATE executions SET status = 'cancelled', finished_at = now(), lease_expires_at = NULL,
             error = 'cancelled: replaced by execution ' || x.by || ' (overlap: replace)'
           FROM unnest($1::bigint[], $2::bigint[]) AS x(id, by)
           WHERE executions.id = x.id AND executions.status = 'running'
           RETURNING executions.id, executions.job_id, executions.attempt, executions.worker_id, executions.lane
         ),
         counted AS (${countInMinutes('changed', "'cancelled'")})
         SELECT * FROM changed`,
        [toCancel.map((r) => r.id), toCancel.map((r) => r.by)],
      );
      result.replaced = cancelled.rows.map((r) => ({
        id: r.id,
        jobId: r.job_id,
        attempt: r.attempt,
        workerId: r.worker_id,
      }));
    }
    if (toSkip.length > 0) {
      await client.query(
        `WITH changed AS (
           UPDATE executions SET status = 'skipped', finished_at = now(), error = x.reason
           FROM unnest($1::bigint[], $2::text[]) AS x(id, reason)
           WHERE executions.id = x.id AND executions.status IN ('queued', 'retrying')
           RETURNING executions.id, executions.lane
         )
         ${countInMinutes('changed', "'skipped'")}`,
        [toSkip.map((s) => s.row.id), toSkip.map((s) => s.reason)],
      );
      result.skipped = toSkip.map(({ row, reason }) => ({
        id: row.id,
        token: tokens.get(row.id)!,
        jobId: row.job_id,
        attempt: row.attempt,
        lane: row.lane,
        trigger: row.trigger,
        reason,
      }));
    }
    if (toStart.length > 0) {
      const started = await client.query<StartedRow>(START_SQL(null, read), [
        input.workerId,
        input.leaseMs,
        toStart.map((r) => r.id),
        toStart.map((r) => tokens.get(r.id)!),
      ]);
      result.started = started.rows.map(toStarted);
    }
    return result;
  });
}
