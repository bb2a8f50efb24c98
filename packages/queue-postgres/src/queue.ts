/**
 * @module queue — the PostgreSQL adapter of the queue ports: the same protocol as the Redis queue (ready and delayed
 * ids, leases fenced by tokens, reaping, a dead-letter list, flow-control limits), on tables (migration 009) and PL/pgSQL
 * functions (packages/queue-postgres/sql, installed by migration 016) that play the part of the Lua scripts. Claims take rows with
 * FOR UPDATE SKIP LOCKED; wake-ups and cancellations travel by LISTEN/NOTIFY.
 */
import {
  LANES,
  type Claim,
  type ClaimIsolation,
  type ClaimRequest,
  type ClaimResult,
  type ClaimState,
  type Lane,
  type MovedExecution,
  type QueueAdapter,
  type QueueDepth,
  type QueueItem,
} from '@jobs/core';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { flowOperations } from './queue-flow';
import { createListener } from './listener';

export interface PostgresQueueOptions {
  /** Opens the dedicated LISTEN connection; default: a client with the pool's own connection options. */
  listenClient?: () => pg.Client;
}

/** Items per statement of a push. */
const PUSH_CHUNK = 5000;
/** Largest NOTIFY payload is 8000 bytes: cancellations go in chunks of ids well under it. */
const CANCEL_CHUNK = 400;

/**
 * @example
 *   const queue = createPostgresQueue(pool);
 *   await queue.push([{ id: '1', lane: 'short', priority: 0, dueAt: new Date() }]);
 */
export function createPostgresQueue(pool: pg.Pool, options: PostgresQueueOptions = {}) {
  const connect =
    options.listenClient ?? (() => new pg.Client((pool as unknown as { options: pg.ClientConfig }).options));
  const listener = createListener(connect, LANES);

  /** The columns of queue_push / queue_settle's push arrays. */
  const pushColumns = (items: readonly QueueItem[]) => [
    items.map((c) => c.id),
    items.map((c) => c.lane),
    items.map((c) => c.priority),
    items.map((c) => c.dueAt.toISOString()),
    items.map((c) => c.flow?.jobId ?? null),
    items.map((c) => c.flow?.key ?? null),
  ];

  async function push(items: readonly QueueItem[]): Promise<number> {
    let added = 0;
    for (let i = 0; i < items.length; i += PUSH_CHUNK) {
      const { rows } = await pool.query(
        'SELECT queue_push($1::bigint[], $2::text[], $3::int[], $4::timestamptz[], $5::bigint[], $6::text[]) AS n',
        pushColumns(items.slice(i, i + PUSH_CHUNK)),
      );
      added += Number(rows[0].n);
    }
    return added;
  }

  /** Acks, dead-letters, frees and pushes in one statement (pushes beyond the first chunk follow separately). */
  async function settleClaims(input: {
    lane: Lane;
    acks: readonly Claim[];
    dead: readonly string[];
    release: readonly string[];
    push: readonly QueueItem[];
  }): Promise<void> {
    if (input.acks.length === 0 && input.dead.length === 0 && input.release.length === 0 && input.push.length === 0)
      return;
    await pool.query(
      `SELECT queue_settle($1::bigint[], $2::text[], $3::bigint[], $4, $5::bigint[],
                           $6::bigint[], $7::text[], $8::int[], $9::timestamptz[], $10::bigint[], $11::text[])`,
      [
        input.acks.map((c) => c.id),
        input.acks.map((c) => c.token),
        input.dead,
        input.lane,
        input.release,
        ...pushColumns(input.push.slice(0, PUSH_CHUNK)),
      ],
    );
    if (input.push.length > PUSH_CHUNK) await push(input.push.slice(PUSH_CHUNK));
  }

  const queue = {
    pool,
    ...flowOperations(pool, (ids) => settleClaims({ lane: 'short', acks: [], dead: [], release: ids, push: [] })),

    async push(items: readonly QueueItem[]): Promise<void> {
      await push(items);
    },

    /** Pushes what the queue does not hold; the reconciler's primitive (push is already idempotent per id). */
    ensure: push,

    async claim(input: ClaimRequest): Promise<ClaimResult> {
      listener.take(input.lane);
      const { rows } = await pool.query(
        'SELECT id::text, token, next_due, state, isolation FROM queue_claim_for($1, $2, $3, $4, $5, $6)',
        [
          input.lane,
          input.count,
          input.leaseMs,
          randomBytes(9).toString('base64url'),
          input.worker ?? '',
          !!input.idle,
        ],
      );
      const claims: Claim[] = [];
      let nextDueAt: Date | null = null;
      let state: ClaimState = 'ok';
      let isolation: ClaimIsolation = null;
      for (const row of rows) {
        if (row.id !== null) claims.push({ id: row.id, token: row.token });
        else {
          nextDueAt = row.next_due;
          state = row.state;
          isolation = row.isolation;
        }
      }
      return { claims, nextDueAt, state, isolation };
    },

    waitForWork: (lanes: readonly Lane[], timeoutMs: number) => listener.wait(lanes, timeoutMs),

    /** Extends leases held under these tokens (a reaped one is taken back: PostgreSQL just confirmed its owner). */
    async heartbeat(input: { lane: Lane; claims: Claim[]; leaseMs: number }): Promise<string[]> {
      if (input.claims.length === 0) return [];
      const { rows } = await pool.query(
        // SKIP LOCKED: a row locked now is being acknowledged (or reaped), and a heartbeat that waited for it could
        // deadlock with the acknowledgement of a whole batch.
        `WITH input AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS a(id, token)),
         mine AS (
           SELECT q.id, i.token FROM queue_items q JOIN input i ON i.id = q.id
           WHERE q.token = i.token OR q.state = 'reaped' FOR UPDATE OF q SKIP LOCKED),
         extended AS (
           UPDATE queue_items q SET state = 'leased', token = m.token,
                  lease_expires_at = clock_timestamp() + $3 * interval '1 millisecond'
           FROM mine m WHERE q.id = m.id
           RETURNING q.id)
         SELECT q.id::text FROM queue_items q JOIN input i ON i.id = q.id WHERE q.state = 'leased' AND q.token <> i.token`,
        [input.claims.map((c) => c.id), input.claims.map((c) => c.token), input.leaseMs],
      );
      return rows.map((r) => r.id);
    },

    /** Acks finished claims and dead-letters dead ones, then pushes new items (retries), in one round trip. */
    async settle(input: { lane: Lane; acks: Claim[]; dead: string[]; push: QueueItem[] }): Promise<void> {
      await settleClaims({ lane: input.lane, acks: input.acks, dead: input.dead, release: [], push: input.push });
    },

    async leasesHeld(input: { lane: Lane; claims: Claim[] }): Promise<Set<string>> {
      if (input.claims.length === 0) return new Set();
      const { rows } = await pool.query(
        `SELECT q.id::text FROM queue_items q JOIN unnest($1::bigint[], $2::text[]) AS a(id, token) ON a.id = q.id
         WHERE q.state = 'leased' AND q.token = a.token AND q.lease_expires_at > clock_timestamp()`,
        [input.claims.map((c) => c.id), input.claims.map((c) => c.token)],
      );
      return new Set(rows.map((r) => r.id as string));
    },

    async reapExpired(input: { lane: Lane; limit: number }): Promise<{ id: string; deliveries: number }[]> {
      const { rows } = await pool.query('SELECT id::text, deliveries FROM queue_reap($1, $2)', [
        input.lane,
        input.limit,
      ]);
      return rows.map((r) => ({ id: r.id, deliveries: Number(r.deliveries) }));
    },

    /** Drops waiting ids and tells the workers running the others to kill them. */
    async withdraw(items: readonly (QueueItem & { running: boolean })[]): Promise<void> {
      if (items.length === 0) return;
      await pool.query(
        `DELETE FROM queue_items WHERE id = ANY ($1::bigint[]) AND state IN ('ready', 'delayed', 'parked', 'reaped')`,
        [items.map((i) => i.id)],
      );
      const running = items.filter((i) => i.running).map((i) => i.id);
      for (let i = 0; i < running.length; i += CANCEL_CHUNK) {
        await pool.query(`SELECT pg_notify(queue_channel('cancel'), $1)`, [
          running.slice(i, i + CANCEL_CHUNK).join(','),
        ]);
      }
    },

    /**
     * Moves waiting attempts to their new lane, priority or flow key: each is taken out of where it waits and, only
     * if it was there (not claimed meanwhile by a worker, which then runs it where it was), pushed where it belongs.
     */
    async move(moves: readonly MovedExecution[]): Promise<void> {
      for (let i = 0; i < moves.length; i += PUSH_CHUNK) {
        const chunk = moves.slice(i, i + PUSH_CHUNK);
        const { rows } = await pool.query(
          `DELETE FROM queue_items WHERE id = ANY ($1::bigint[]) AND state IN ('ready', 'delayed', 'parked') RETURNING id::text`,
          [chunk.map((m) => m.from.id)],
        );
        const taken = new Set(rows.map((r) => r.id as string));
        await push(chunk.filter((m) => taken.has(m.from.id)).map((m) => m.to));
      }
    },

    async forgetDead(items: readonly { id: string; lane: Lane }[]): Promise<void> {
      if (items.length === 0) return;
      await pool.query(
        `DELETE FROM queue_dead d USING unnest($1::bigint[], $2::text[]) AS f(id, lane) WHERE d.id = f.id AND d.lane = f.lane`,
        [items.map((i) => i.id), items.map((i) => i.lane)],
      );
    },

    async deadIds(lane: Lane, limit = 100): Promise<string[]> {
      const { rows } = await pool.query('SELECT id::text FROM queue_dead WHERE lane = $1 ORDER BY seq DESC LIMIT $2', [
        lane,
        limit,
      ]);
      return rows.map((r) => r.id);
    },

    /** Per lane: ready, delayed, leased (running or being started) and dead-lettered ids; parked: `flowInspect`. */
    async depth(): Promise<QueueDepth> {
      const { rows } = await pool.query(
        `SELECT l.lane,
                (SELECT count(*) FROM queue_items q WHERE q.lane = l.lane AND q.state = 'ready')::int AS ready,
                (SELECT count(*) FROM queue_items q WHERE q.lane = l.lane AND q.state = 'delayed')::int AS delayed,
                (SELECT count(*) FROM queue_items q WHERE q.lane = l.lane AND q.state = 'leased')::int AS running,
                (SELECT count(*) FROM queue_dead d WHERE d.lane = l.lane)::int AS dead
         FROM unnest($1::text[]) AS l(lane)`,
        [LANES],
      );
      const out = {} as QueueDepth;
      for (const r of rows)
        out[r.lane as Lane] = { ready: r.ready, delayed: r.delayed, running: r.running, dead: r.dead };
      return out;
    },

    async dueCount(input: { lane: Lane; before: Date }): Promise<number> {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM queue_items WHERE lane = $1 AND state = 'delayed' AND due_at <= $2`,
        [input.lane, input.before],
      );
      return rows[0].n;
    },

    async subscribeCancels(onCancel: (ids: string[]) => void): Promise<() => Promise<void>> {
      const stop = await listener.onCancel(onCancel);
      return async () => stop();
    },

    /** Closes the LISTEN connection (the pool belongs to the caller). */
    close: () => listener.close(),

    async ping(): Promise<boolean> {
      await pool.query('SELECT 1');
      return true;
    },
  };
  return queue satisfies QueueAdapter;
}
