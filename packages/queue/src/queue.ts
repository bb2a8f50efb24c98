/**
 * @module queue — the Redis adapter: delivery of execution ids with leases, through atomic Lua scripts.
 * Redis holds ids, due times and leases only; PostgreSQL holds the state, so everything here can be rebuilt.
 */
import type {
  Claim,
  ClaimIsolation,
  ClaimRequest,
  ClaimResult,
  ClaimState,
  Lane,
  MovedExecution,
  QueueAdapter,
  QueueItem,
} from '@jobs/core';
import { LANES } from '@jobs/core';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisClient, ScriptClient, ScriptPipeline } from './client';
import { queueKeys, type QueueKeys } from './keys';
import { LUA_SCRIPTS } from './lua.generated';
import { flowOperations } from './queue-flow';

export type { RedisClient } from './client';

/** Registers the Lua scripts (file `<name>-<numKeys>.lua`) as commands; EVALSHA with EVAL fallback is ioredis's. */
function defineScripts(redis: RedisClient): void {
  for (const [file, lua] of Object.entries(LUA_SCRIPTS)) {
    const match = /^([a-z]+)-(\d+)\.lua$/.exec(file);
    if (!match) throw new Error(`Lua script file name must be <name>-<numKeys>.lua: ${file}`);
    const name = match[1]!;
    if (typeof (redis as unknown as Record<string, unknown>)[name] === 'function') continue;
    redis.defineCommand(name, { numberOfKeys: Number(match[2]), lua });
  }
}

export interface QueueOptions {
  /** Key prefix containing a {hash tag}; default "{jobs}". */
  prefix?: string;
  /** A second connection for blocking waits (BZPOPMIN); created lazily with `duplicate()` if not given. */
  blocking?: RedisClient;
}

export type Queue = ReturnType<typeof createQueue>;

/**
 * @example
 *   const queue = createQueue(new Redis(url), { prefix: '{jobs}' });
 *   await queue.push([{ id: '1', lane: 'short', priority: 0, dueAt: new Date() }]);
 */
export function createQueue(redis: RedisClient, options: QueueOptions = {}) {
  const keys: QueueKeys = queueKeys(options.prefix);
  defineScripts(redis);
  const scripts = redis as unknown as ScriptClient;
  let blocking = options.blocking ?? null;
  /** The blocking wait in progress, kept when its caller stopped waiting: a marker it pops later is not lost. */
  let wait: BlockingWait | null = null;
  const ownsBlocking = !options.blocking;

  const pushArgs = (items: readonly QueueItem[]) =>
    items.flatMap((i) => [
      i.id,
      String(i.priority),
      String(i.dueAt.getTime()),
      i.flow ? `${i.flow.jobId}\t${i.flow.key}` : '',
    ]);
  const pushKeys = (lane: Lane) => {
    const k = keys.lane(lane);
    return [k.ready, k.delayed, k.lease, k.marker, k.fready, keys.control, keys.flow, lane];
  };

  async function push(items: readonly QueueItem[]): Promise<number> {
    let added = 0;
    for (const [lane, laneItems] of byLane(items)) {
      for (const chunk of chunks(laneItems, 1000)) added += await scripts.push(...pushKeys(lane), ...pushArgs(chunk));
    }
    return added;
  }

  const queue = {
    keys,
    redis,
    ...flowOperations(redis, keys, scripts),

    async push(items: readonly QueueItem[]): Promise<void> {
      await push(items);
    },

    /** Pushes what Redis does not hold; the reconciler's primitive (push is already idempotent per id). */
    ensure: push,

    async claim(input: ClaimRequest): Promise<ClaimResult> {
      const k = keys.lane(input.lane);
      const tokenPrefix = randomBytes(9).toString('base64url');
      const reply = await scripts.claim(
        k.ready,
        k.delayed,
        k.lease,
        k.tokens,
        k.marker,
        k.deliveries,
        k.fready,
        keys.control,
        keys.flow,
        k.turn,
        input.count,
        input.leaseMs,
        tokenPrefix,
        1000,
        input.lane,
        input.worker ?? '',
        input.idle ? '1' : '0',
      );
      const claims: Claim[] = [];
      for (let i = 3; i < reply.length; i += 2) claims.push({ id: String(reply[i]), token: String(reply[i + 1]) });
      const next = Number(reply[0]);
      return {
        claims,
        nextDueAt: next >= 0 ? new Date(next) : null,
        state: reply[1] as ClaimState,
        isolation: (reply[2] || null) as ClaimIsolation,
      };
    },

    async waitForWork(lanes: readonly Lane[], timeoutMs: number): Promise<Lane | null> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // A marker popped after the previous caller gave up waiting: its lane has work now.
        if (wait?.settled) {
          const lane = wait.lane;
          wait = null;
          if (lane) return lane;
        }
        const left = deadline - Date.now();
        if (left < 10) {
          if (left > 0) await sleep(left);
          return null;
        }
        blocking ??= duplicate(redis);
        // Redis notices a blocking timeout only on its next cron tick (hz 10: up to ~100 ms late), so a local timer
        // races the wait. A wait that is still pending is reused rather than stacked on the connection.
        if (!wait) {
          const byMarker = new Map(lanes.map((l) => [keys.lane(l).marker, l]));
          const started: BlockingWait = { done: Promise.resolve(), settled: false, lane: null };
          started.done = blocking.bzpopmin(...byMarker.keys(), (left / 1000).toFixed(3)).then(
            (reply) => {
              started.lane = reply ? (byMarker.get(String(reply[0])) ?? null) : null;
              started.settled = true;
            },
            // A failing connection must not turn the caller's wait into a busy loop.
            () => sleep(left).then(() => void (started.settled = true)),
          );
          wait = started;
        }
        const current = wait;
        const woken = await Promise.race([current.done.then(() => true), sleep(left).then(() => false)]);
        if (!woken) return null;
        if (wait === current) wait = null;
        if (current.lane) return current.lane;
        // A reused wait ran out at Redis before this caller's time did: wait again for the rest.
      }
    },

    async heartbeat(input: { lane: Lane; claims: Claim[]; leaseMs: number }): Promise<string[]> {
      if (input.claims.length === 0) return [];
      const k = keys.lane(input.lane);
      // All chunks are sent at once, in order, so none is delayed behind an acknowledgement sent meanwhile.
      const replies = await Promise.all(
        chunks(input.claims, 1000).map((chunk) =>
          scripts.heartbeat(k.lease, k.tokens, input.leaseMs, ...chunk.flatMap((c) => [c.id, c.token])),
        ),
      );
      return replies.flat();
    },

    /** Acks finished claims and dead-letters dead ones, then pushes new items (retries), in one round trip. */
    async settle(input: { lane: Lane; acks: Claim[]; dead: string[]; push: QueueItem[] }): Promise<void> {
      const k = keys.lane(input.lane);
      const pipeline = redis.pipeline() as unknown as ScriptPipeline;
      if (input.acks.length > 0 || input.dead.length > 0) {
        pipeline.settle(
          k.lease,
          k.tokens,
          k.dead,
          k.deliveries,
          keys.flow,
          packClaims(input.acks),
          input.dead.join(' '),
          '',
        );
      }
      for (const chunk of chunks(input.push, 1000)) pipeline.push(...pushKeys(input.lane), ...pushArgs(chunk));
      const results = await pipeline.exec();
      const failed = results?.find(([error]) => error);
      if (failed) throw failed[0];
    },

    async leasesHeld(input: { lane: Lane; claims: Claim[] }): Promise<Set<string>> {
      const held = new Set<string>();
      if (input.claims.length === 0) return held;
      const k = keys.lane(input.lane);
      const pipeline = redis.pipeline().time();
      for (const c of input.claims) pipeline.zscore(k.lease, c.id).hget(k.tokens, c.id);
      const replies = (await pipeline.exec()) ?? [];
      for (const [error] of replies) if (error) throw error;
      const [sec, usec] = replies[0]![1] as [string, string];
      const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
      input.claims.forEach((c, i) => {
        const score = replies[1 + i * 2]![1] as string | null;
        const token = replies[2 + i * 2]![1] as string | null;
        if (score !== null && Number(score) > now && token === c.token) held.add(c.id);
      });
      return held;
    },

    async reapExpired(input: { lane: Lane; limit: number }): Promise<{ id: string; deliveries: number }[]> {
      const k = keys.lane(input.lane);
      const reply = await scripts.reap(k.lease, k.tokens, k.deliveries, keys.flow, input.limit);
      const out: { id: string; deliveries: number }[] = [];
      for (let i = 0; i < reply.length; i += 2) out.push({ id: String(reply[i]), deliveries: Number(reply[i + 1]) });
      return out;
    },

    /** Drops waiting ids from ready/delayed and tells workers to kill the running ones. */
    async withdraw(items: readonly (QueueItem & { running: boolean })[]): Promise<void> {
      for (const [lane, laneItems] of byLane(items)) {
        const k = keys.lane(lane);
        await scripts.withdraw(
          k.ready,
          k.delayed,
          k.lease,
          keys.flow,
          lane,
          ...laneItems.flatMap((i) => [i.id, String(i.priority)]),
        );
      }
      const running = items.filter((i) => i.running).map((i) => i.id);
      if (running.length > 0) await redis.publish(keys.cancelChannel, running.join(','));
    },

    /** Delayed ids of a lane due by `before` (the delayed set is scored by due time in ms, see push-7.lua). */
    async dueCount(input: { lane: Lane; before: Date }): Promise<number> {
      return redis.zcount(keys.lane(input.lane).delayed, '-inf', input.before.getTime());
    },

    /**
     * Moves waiting attempts to their new lane, priority or flow key: each is taken out of where it waits and, only
     * if it was there (not claimed meanwhile by a worker, which then runs it where it was), pushed where it belongs.
     */
    async move(moves: readonly MovedExecution[]): Promise<void> {
      for (const chunk of chunks(moves, 1000)) {
        const pipeline = redis.pipeline() as unknown as ScriptPipeline;
        for (const { from } of chunk) {
          const k = keys.lane(from.lane);
          pipeline.withdraw(k.ready, k.delayed, k.lease, keys.flow, from.lane, from.id, String(from.priority));
        }
        const results = (await pipeline.exec()) ?? [];
        const failed = results.find(([error]) => error);
        if (failed) throw failed[0];
        await push(chunk.filter((_, i) => Number(results[i]![1]) > 0).map((m) => m.to));
      }
    },

    /**
     * Removes ids from the dead-letter lists, in one round trip. Each LREM stops at its id (an id is listed once):
     * searched from the head (the list is newest first: replays), or from the tail for the `oldest` (retention).
     */
    async forgetDead(items: readonly { id: string; lane: Lane }[], options: { oldest?: boolean } = {}): Promise<void> {
      if (items.length === 0) return;
      const pipeline = redis.pipeline();
      for (const item of items) pipeline.lrem(keys.lane(item.lane).dead, options.oldest ? -1 : 1, item.id);
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
    },

    /** Ids on the dead-letter list of a lane, newest first. */
    async deadIds(lane: Lane, limit = 100): Promise<string[]> {
      return redis.lrange(keys.lane(lane).dead, 0, limit - 1);
    },

    /**
     * Queue depth per lane: ready (attempts of limited jobs included, until checked against their limits), delayed,
     * leased (running or being started) and dead-lettered ids. Attempts held back by limits: `flowInspect`.
     */
    async depth(): Promise<Record<Lane, { ready: number; delayed: number; running: number; dead: number }>> {
      const pipeline = redis.pipeline();
      for (const lane of LANES) {
        const k = keys.lane(lane);
        pipeline.zcard(k.ready).zcard(k.fready).zcard(k.delayed).zcard(k.lease).llen(k.dead);
      }
      const replies = ((await pipeline.exec()) ?? []).map(([error, value]) => {
        if (error) throw error;
        return Number(value);
      });
      const out = {} as Record<Lane, { ready: number; delayed: number; running: number; dead: number }>;
      LANES.forEach((lane, i) => {
        const [ready, fready, delayed, running, dead] = replies.slice(i * 5, i * 5 + 5) as [
          number,
          number,
          number,
          number,
          number,
        ];
        out[lane] = { ready: ready + fready, delayed, running, dead };
      });
      return out;
    },

    /**
     * Calls `onCancel` with execution ids whose cancellation was requested. Uses its own connection (a
     * subscribed connection can do nothing else); returns a function that unsubscribes and closes it.
     */
    async subscribeCancels(onCancel: (ids: string[]) => void): Promise<() => Promise<void>> {
      const subscriber = duplicate(redis);
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === keys.cancelChannel) onCancel(message.split(',').filter(Boolean));
      });
      await subscriber.subscribe(keys.cancelChannel);
      return async () => {
        subscriber.disconnect();
      };
    },

    /** Closes the blocking connection this queue opened (the main client belongs to the caller). */
    async close(): Promise<void> {
      if (blocking && ownsBlocking) blocking.disconnect();
      blocking = null;
    },

    async ping(): Promise<boolean> {
      return (await redis.ping()) === 'PONG';
    },
  };
  return queue satisfies QueueAdapter;
}

/** One BZPOPMIN on the lanes' markers; `lane` is the lane whose marker it popped (null: timed out). */
interface BlockingWait {
  done: Promise<void>;
  settled: boolean;
  lane: Lane | null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/** A new connection with the same options (Redis and Cluster type `duplicate` differently). */
function duplicate(redis: RedisClient): RedisClient {
  const copy = (redis as Redis).duplicate();
  // Listeners are not copied; without one, ioredis prints every reconnect error of this connection to stderr.
  // The main client's listener already reports Redis being away.
  copy.on('error', () => undefined);
  return copy;
}

/** Claims as "id token id token ...": one Lua argument for a whole batch (see settle-5.lua). */
function packClaims(claims: readonly Claim[]): string {
  let out = '';
  for (const c of claims) out += out ? ` ${c.id} ${c.token}` : `${c.id} ${c.token}`;
  return out;
}

function byLane<T extends { lane: Lane }>(items: readonly T[]): Map<Lane, T[]> {
  const map = new Map<Lane, T[]>();
  for (const item of items) {
    const list = map.get(item.lane);
    if (list) list.push(item);
    else map.set(item.lane, [item]);
  }
  return map;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
