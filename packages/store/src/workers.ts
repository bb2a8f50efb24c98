/** @module workers — SQL on the workers table: register/heartbeat (one upsert, which also reports a newer release), list active, remove. */
import type { WorkerInfo } from '@jobs/core';
import type pg from 'pg';
import { idempotent } from './pool';
import { toWorker } from './rows';

/**
 * Registers the worker or refreshes its heartbeat, and in the same round trip answers whether it should retire: the
 * newest release recorded after the worker's own (`info.release`) once live workers of newer releases (a heartbeat
 * within `info.liveWithinMs`) serve every lane this worker serves; null otherwise, and always for a worker without a
 * release or one whose release is not recorded. Until the newer workers run, an old worker keeps claiming, so a
 * deploy whose new workers never come up (or are rolled back) leaves the old ones working.
 */
export async function workerUpsert(pool: pg.Pool, info: WorkerInfo): Promise<{ newerRelease: string | null }> {
  // An upsert of the same values: safe to send again after a dead connection.
  const { rows } = await pool.query(
    idempotent({
      text: `WITH up AS (
       INSERT INTO workers (id, kind, host, lanes, concurrency, in_flight, version, started_at, last_heartbeat_at, release)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), $9)
       ON CONFLICT (id) DO UPDATE SET in_flight = excluded.in_flight, last_heartbeat_at = now()
       RETURNING 1),
     mine AS (SELECT r.seq FROM releases r WHERE $9::text IS NOT NULL AND r.release = $9::text)
     SELECT (SELECT n.release FROM releases n, mine
             WHERE n.seq > mine.seq
               AND NOT EXISTS (
                 SELECT 1 FROM unnest($4::text[]) AS l(lane)
                 WHERE NOT EXISTS (
                   SELECT 1 FROM workers w JOIN releases wr ON wr.release = w.release
                   WHERE wr.seq > mine.seq AND l.lane = ANY (w.lanes)
                     AND w.last_heartbeat_at > now() - make_interval(secs => $10::double precision / 1000)))
             ORDER BY n.seq DESC LIMIT 1) AS newer_release
     FROM up`,
      values: [
        info.id,
        info.kind,
        info.host,
        info.lanes,
        info.concurrency,
        info.inFlight,
        info.version,
        info.startedAt,
        info.release ?? null,
        info.liveWithinMs ?? 30_000,
      ],
    }),
  );
  return { newerRelease: rows[0]?.newer_release ?? null };
}

/** Workers that heartbeated within `activeWithinMs`, newest first. */
export async function workerListActive(pool: pg.Pool, activeWithinMs: number): Promise<WorkerInfo[]> {
  const { rows } = await pool.query(
    `SELECT * FROM workers WHERE last_heartbeat_at > now() - make_interval(secs => $1::double precision / 1000)
     ORDER BY started_at DESC, id`,
    [activeWithinMs],
  );
  return rows.map(toWorker);
}

export async function workerRemove(pool: pg.Pool, id: string): Promise<void> {
  await pool.query(idempotent({ text: 'DELETE FROM workers WHERE id = $1', values: [id] }));
}

/** Forgets workers silent for longer than `olderThanMs` (their attempts are the reaper's business). */
export async function workersPrune(pool: pg.Pool, olderThanMs: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM workers WHERE last_heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)`,
    [olderThanMs],
  );
  return rowCount ?? 0;
}
