/**
 * @module live-output — live output on the PostgreSQL queue: what running attempts print, in the unlogged
 * `live_output` table (migration 011), for readers while they run. The buffering is core's (createLiveOutputBuffer:
 * one statement per interval, nothing for a job that prints a line and ends within it). Each write keeps at most
 * `maxEntries` rows per execution; rows older than `ttlMs` are deleted by the writers, at most once a minute each.
 * Cursors look like the Redis queue's stream ids (`<seq>-0`), so readers and the SSE resume work the same.
 */
import {
  LIVE_OUTPUT_DEFAULTS,
  createLiveOutputBuffer,
  type LiveOutputBuffer,
  type LiveOutputOptions,
  type LiveOutputReader,
} from '@jobs/core';
import type pg from 'pg';

const EXPIRE_EVERY_MS = 60_000;

/**
 * @example
 *   const live = createPostgresLiveOutput(pool);
 *   const runner = createRunner({ liveOutput: live });
 *   await live.close();
 */
export function createPostgresLiveOutput(pool: pg.Pool, options: LiveOutputOptions = {}): LiveOutputBuffer {
  const { flushMs, ttlMs, maxEntries, maxFlushBytes } = { ...LIVE_OUTPUT_DEFAULTS, ...options };
  let expiredAt = 0;
  return createLiveOutputBuffer(
    async (allWrites) => {
      // The table keeps rows until they expire; an attempt's end changes nothing here.
      const writes = allWrites.filter((w) => w.text !== '');
      if (writes.length === 0) return;
      // One statement: the writes, and each written execution trimmed to its newest maxEntries rows. The trim sees
      // the rows as they were before this insert (one new row per execution per interval), so it keeps maxEntries - 1.
      await pool.query(
        `WITH added AS (
           INSERT INTO live_output (execution_id, text) SELECT * FROM unnest($1::bigint[], $2::text[]) RETURNING execution_id),
         cut AS (
           SELECT a.execution_id,
                  (SELECT s.seq FROM live_output s WHERE s.execution_id = a.execution_id ORDER BY s.seq DESC OFFSET $3 - 1 LIMIT 1) AS below
           FROM (SELECT DISTINCT execution_id FROM added) a)
         DELETE FROM live_output l USING cut c WHERE l.execution_id = c.execution_id AND l.seq <= c.below`,
        [writes.map((w) => w.executionId), writes.map((w) => w.text), maxEntries],
      );
      if (Date.now() - expiredAt >= EXPIRE_EVERY_MS) {
        expiredAt = Date.now();
        await pool.query(
          `DELETE FROM live_output WHERE written_at < now() - make_interval(secs => $1::double precision / 1000)`,
          [ttlMs],
        );
      }
    },
    { flushMs, maxFlushBytes, onError: options.onError },
  );
}

const CURSOR = /^(\d{1,19})-0$/;

/**
 * Reads what createPostgresLiveOutput writes: an execution's writes after a cursor, oldest first, at most 1,000 a call.
 * @example const entries = await postgresLiveOutputReader(pool).read('42', null);
 */
export function postgresLiveOutputReader(pool: pg.Pool): LiveOutputReader {
  return {
    async read(executionId, afterId) {
      if (!/^\d{1,19}$/.test(executionId)) return [];
      const after = afterId === null ? '0' : (CURSOR.exec(afterId)?.[1] ?? '0');
      const { rows } = await pool.query(
        `SELECT seq::text AS seq, text FROM live_output WHERE execution_id = $1 AND seq > $2 ORDER BY live_output.seq LIMIT 1000`,
        [executionId, after],
      );
      return rows.map((r) => ({ id: `${r.seq}-0`, text: r.text as string }));
    },
  };
}
