/** @module workers — SQL on the workers table: register/heartbeat (one upsert), list active, remove. */
import type { WorkerInfo } from '@jobs/core';
import type pg from 'pg';
import { idempotent } from './pool';
import { toWorker } from './rows';

export async function workerUpsert(pool: pg.Pool, info: WorkerInfo): Promise<void> {
  // An upsert of the same values: safe to send again after a dead connection.
  await pool.query(
    idempotent({
      text: `INSERT INTO workers (id, kind, host, lanes, concurrency, in_flight, version, started_at, last_heartbeat_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
     ON CONFLICT (id) DO UPDATE SET in_flight = excluded.in_flight, last_heartbeat_at = now()`,
      values: [
        info.id,
        info.kind,
        info.host,
        info.lanes,
        info.concurrency,
        info.inFlight,
        info.version,
        info.startedAt,
      ],
    }),
  );
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
