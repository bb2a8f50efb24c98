/**
 * The queue port, as both adapters must implement it (run once per adapter: the `redis` and `postgres` projects in
 * test/vitest.config.ts): delivery order, delayed ids, leases fenced by tokens, heartbeats, reaping with delivery
 * counts, withdrawal, the dead-letter list, paused lanes, wake-ups and cancellations.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setLanePaused, type QueueItem } from '@jobs/core';
import { createTestEnv, eventually, recorder, type TestEnv } from './support/env';
import { expireLease, leasesLeft } from './support/queue-probe';

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv('queue');
});
afterEach(async () => {
  await env.cleanup();
});

const item = (id: number, over: Partial<QueueItem> = {}): QueueItem => ({
  id: String(id),
  lane: 'short',
  priority: 0,
  dueAt: new Date(Date.now() - 1000),
  ...over,
});
const claim = (count = 10, leaseMs = 60_000, lane: 'short' | 'long' = 'short') =>
  env.queue.claim({ lane, count, leaseMs });

describe(`queue port (${process.env.TEST_QUEUE_BACKEND ?? 'redis'})`, () => {
  it('delivers each id once, highest priority first, then earliest due; a repeated push adds nothing', async () => {
    const t = Date.now() - 10_000;
    await env.queue.push([
      item(1, { dueAt: new Date(t + 2) }),
      item(2, { priority: 5, dueAt: new Date(t + 3) }),
      item(3, { dueAt: new Date(t + 1) }),
    ]);
    expect(await env.queue.ensure([item(1), item(2), item(4)])).toBe(1);
    const first = await claim(2);
    expect(first.claims.map((c) => c.id).sort()).toEqual(['2', '3']);
    expect(first.state).toBe('ok');
    // A leased id is held: pushing it again does not duplicate it.
    expect(await env.queue.ensure([item(2)])).toBe(0);
    expect((await claim(10)).claims.map((c) => c.id).sort()).toEqual(['1', '4']);
    expect((await claim(10)).claims).toEqual([]);
    expect((await env.queue.depth()).short).toEqual({ ready: 0, delayed: 0, running: 4, dead: 0 });
  });

  it('holds delayed ids until due and reports when the next one is', async () => {
    const due = new Date(Date.now() + 600);
    await env.queue.push([item(1, { dueAt: due }), item(2, { dueAt: new Date(Date.now() + 60_000) })]);
    const none = await claim();
    expect(none.claims).toEqual([]);
    expect(Math.abs(none.nextDueAt!.getTime() - due.getTime())).toBeLessThan(5);
    expect(await env.queue.dueCount({ lane: 'short', before: new Date(Date.now() + 5000) })).toBe(1);
    await new Promise((r) => setTimeout(r, 700));
    expect((await claim()).claims.map((c) => c.id)).toEqual(['1']);
  });

  it('fences acknowledgements and heartbeats by the lease token', async () => {
    await env.queue.push([item(1), item(2)]);
    const { claims } = await claim();
    const [a, b] = claims as [{ id: string; token: string }, { id: string; token: string }];
    // A stale token acknowledges nothing, and a heartbeat under it reports the id as someone else's.
    await env.queue.settle({ lane: 'short', acks: [{ id: a.id, token: 'forged' }], dead: [], push: [] });
    expect(
      await env.queue.heartbeat({ lane: 'short', claims: [{ id: a.id, token: 'forged' }, b], leaseMs: 60_000 }),
    ).toEqual([a.id]);
    expect(await env.queue.leasesHeld({ lane: 'short', claims: [a, { id: b.id, token: 'forged' }] })).toEqual(
      new Set([a.id]),
    );
    await env.queue.settle({ lane: 'short', acks: [a], dead: [b.id], push: [item(3)] });
    await env.queue.settle({ lane: 'short', acks: [b], dead: [], push: [] });
    expect(await leasesLeft(env, 'short')).toBe(0);
    expect((await env.queue.depth()).short).toEqual({ ready: 1, delayed: 0, running: 0, dead: 1 });
    expect(await env.queue.deadIds('short')).toEqual([b.id]);
    await env.queue.forgetDead([{ id: b.id, lane: 'short' }]);
    expect(await env.queue.deadIds('short')).toEqual([]);
  });

  it('reaps expired leases with their delivery counts; a redelivery counts again and its old token is void', async () => {
    await env.queue.push([item(1)]);
    const first = await claim(1, 100);
    await new Promise((r) => setTimeout(r, 150));
    expect(await env.queue.reapExpired({ lane: 'short', limit: 10 })).toEqual([{ id: '1', deliveries: 1 }]);
    expect(await env.queue.reapExpired({ lane: 'short', limit: 10 })).toEqual([]);
    await env.queue.push([item(1)]);
    // Its worker was lost: it is a suspect now, which only a claim of a worker with nothing in flight takes.
    const second = await env.queue.claim({ lane: 'short', count: 1, leaseMs: 100, idle: true });
    expect(second.claims.map((c) => c.id)).toEqual(['1']);
    expect(second.claims[0]!.token).not.toBe(first.claims[0]!.token);
    await env.queue.settle({ lane: 'short', acks: first.claims, dead: [], push: [] });
    expect((await env.queue.depth()).short.running).toBe(1);
    await new Promise((r) => setTimeout(r, 150));
    expect(await env.queue.reapExpired({ lane: 'short', limit: 10 })).toEqual([{ id: '1', deliveries: 2 }]);
  });

  describe('a suspect (an attempt whose worker was lost: it may kill its worker again)', () => {
    /** Makes id 1 a suspect: claimed, its lease expired and reaped, then pushed again (as reapOnce does). */
    async function suspect(over: Partial<QueueItem> = {}): Promise<void> {
      await env.queue.push([item(1, over)]);
      await claim(1, 60_000, over.lane ?? 'short');
      await expireLease(env, over.lane ?? 'short', '1');
      expect(await env.queue.reapExpired({ lane: over.lane ?? 'short', limit: 10 })).toEqual([
        { id: '1', deliveries: 1 },
      ]);
      await env.queue.push([item(1, over)]);
    }
    const as = (worker: string, idle: boolean, count = 10, leaseMs = 60_000) =>
      env.queue.claim({ lane: 'short', count, leaseMs, worker, idle });
    const ids = (r: { claims: { id: string }[] }) => r.claims.map((c) => c.id).sort();

    it('is claimed only by an idle worker, alone; a busy one stops before it (its turn) or passes over it', async () => {
      const t = Date.now() - 10_000;
      await suspect({ dueAt: new Date(t) });
      await env.queue.push([2, 3, 4, 5].map((id) => item(id, { dueAt: new Date(t + id) })));
      // The first busy worker to meet it takes the lane's turn and claims nothing from there on.
      expect(await as('a', false)).toMatchObject({ claims: [], isolation: 'turn' });
      // Another busy worker passes over it and claims what is behind it.
      const b = await as('b', false, 2);
      expect([ids(b), b.isolation]).toEqual([['2', '3'], null]);
      // An idle worker takes it, and nothing else, however many it asks for.
      const c = await as('c', true);
      expect([ids(c), c.isolation]).toEqual([['1'], 'alone']);
      expect((await env.queue.depth()).short).toMatchObject({ ready: 2, running: 3 });
      // Nothing else of it is left: the turn's holder, idle at last, claims the healthy rest.
      expect(await as('a', false, 0)).toMatchObject({ claims: [], isolation: 'turn' });
      const a = await as('a', true);
      expect([ids(a), a.isolation]).toEqual([['4', '5'], null]);
      expect(await as('a', false, 0)).toMatchObject({ isolation: null });
    });

    it('is not taken by an idle worker once it claimed something ahead of it: it takes the turn instead', async () => {
      const t = Date.now() - 10_000;
      await suspect({ dueAt: new Date(t + 1) });
      await env.queue.push([item(2, { dueAt: new Date(t) }), item(3, { dueAt: new Date(t + 2) })]);
      const first = await as('a', true);
      expect([ids(first), first.isolation]).toEqual([['2'], 'turn']);
      // Idle again (2 ended): now it meets the suspect first, and takes it alone.
      await env.queue.settle({ lane: 'short', acks: first.claims, dead: [], push: [] });
      const second = await as('a', true);
      expect([ids(second), second.isolation]).toEqual([['1'], 'alone']);
      expect(ids(await as('a', false))).toEqual(['3']);
    });

    it("passes to another worker when its holder does not keep it (it lapses after the claim's lease)", async () => {
      await suspect();
      expect(await as('a', false, 10, 300)).toMatchObject({ claims: [], isolation: 'turn' });
      // Kept (a claim of none) while its holder empties itself; another busy worker passes over the suspect.
      expect(await as('a', false, 0, 300)).toMatchObject({ isolation: 'turn' });
      expect(await as('b', false, 10, 300)).toMatchObject({ claims: [], isolation: null });
      expect(await as('b', false, 0, 300)).toMatchObject({ isolation: null });
      // Holder a died: its turn lapses, and the next busy worker to meet the suspect takes it over.
      await eventually(async () => expect(await as('b', false, 10, 300)).toMatchObject({ isolation: 'turn' }), 5000);
      expect(await as('a', false, 0, 300)).toMatchObject({ isolation: null });
      expect(await as('b', true)).toMatchObject({ claims: [{ id: '1' }], isolation: 'alone' });
    });

    it('wakes no waiting worker by itself: only healthy ready work does', async () => {
      await suspect();
      expect(await as('a', false)).toMatchObject({ claims: [], isolation: 'turn' });
      await env.queue.push([item(2)]);
      expect(ids(await as('b', false))).toEqual(['2']);
      // Only the suspect is left, and a busy worker cannot take it: a wait is not woken for it.
      expect(await env.queue.waitForWork(['short'], 300)).toBeNull();
      expect(await as('c', true)).toMatchObject({ claims: [{ id: '1' }], isolation: 'alone' });
    });
  });

  it('withdraws waiting ids and tells the workers of running ones to stop', async () => {
    const heard: string[] = [];
    const stop = await env.queue.subscribeCancels((ids) => heard.push(...ids));
    try {
      await env.queue.push([item(1), item(2), item(3, { dueAt: new Date(Date.now() + 60_000) })]);
      const { claims } = await claim(1);
      const running = claims[0]!.id;
      const waiting = ['1', '2', '3'].filter((id) => id !== running);
      await env.queue.withdraw([
        ...waiting.map((id) => ({ ...item(Number(id)), running: false })),
        { ...item(Number(running)), running: true },
      ]);
      expect((await env.queue.depth()).short).toEqual({ ready: 0, delayed: 0, running: 1, dead: 0 });
      await eventually(() => heard.includes(running), 2000);
      expect(heard).toEqual([running]);
    } finally {
      await stop();
    }
  });

  it('starts nothing on a paused lane but keeps accepting pushes; a resume wakes a waiting worker', async () => {
    const deps = { store: env.store, queue: env.queue, ...recorder(), clock: { now: () => new Date() } };
    await setLanePaused(deps as never, 'long', true);
    await env.queue.push([item(1, { lane: 'long' })]);
    expect(await claim(1, 60_000, 'long')).toMatchObject({ claims: [], state: 'paused' });
    // Nothing wakes a worker for a paused lane (and this first wait opens the PostgreSQL queue's LISTEN connection).
    expect(await env.queue.waitForWork(['long'], 200)).toBeNull();
    const waiting = env.queue.waitForWork(['long'], 5000);
    await setLanePaused(deps as never, 'long', false);
    expect(await waiting).toBe('long');
    expect((await claim(1, 60_000, 'long')).claims.map((c) => c.id)).toEqual(['1']);
  });

  it('wakes a waiting worker with the lane of a push, and times out with null', async () => {
    expect(await env.queue.waitForWork(['short', 'long'], 50)).toBeNull();
    const waiting = env.queue.waitForWork(['short', 'long'], 5000);
    await new Promise((r) => setTimeout(r, 50));
    const t = Date.now();
    await env.queue.push([item(1, { lane: 'long' })]);
    expect(await waiting).toBe('long');
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it.runIf(process.env.TEST_QUEUE_BACKEND === 'postgres')(
    'a push of ids the queue holds (the reconciler) hides none of them from a claim running meanwhile',
    async () => {
      await env.queue.push([item(1), item(2)]);
      const reconciler = await env.pool.connect();
      try {
        await reconciler.query('BEGIN');
        await reconciler.query(
          `SELECT queue_push('{1,2}', '{short,short}', '{0,0}', ARRAY[now(), now()], '{NULL,NULL}', '{NULL,NULL}')`,
        );
        expect((await claim()).claims.map((c) => c.id).sort()).toEqual(['1', '2']);
      } finally {
        await reconciler.query('COMMIT');
        reconciler.release();
      }
    },
  );

  it.runIf(process.env.TEST_QUEUE_BACKEND === 'postgres')(
    'a push while the wake-up connection reconnects still wakes the waiting worker',
    async () => {
      await env.queue.waitForWork(['short'], 50);
      const { rows } = await env.pool.query(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query LIKE '%LISTEN "' || queue_channel('work') || '"%'`,
      );
      expect(rows).toHaveLength(1);
      // The loss itself wakes every lane (nothing heard meanwhile); the next wait spans the reconnect.
      await eventually(async () => expect(await env.queue.waitForWork(['short'], 100)).toBe('short'));
      const waiting = env.queue.waitForWork(['short'], 5000);
      const t = Date.now();
      await env.queue.push([item(1)]);
      expect(await waiting).toBe('short');
      expect(Date.now() - t).toBeLessThan(3000);
    },
  );
});
