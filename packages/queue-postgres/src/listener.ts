/**
 * @module listener — the queue's one LISTEN connection: wake-ups for waiting workers (`work` channel, lane names)
 * and cancellations (`cancel` channel, execution ids). A dedicated client, because a pooled connection given back
 * to the pool would stop listening. Nothing polls: an idle worker sleeps until a notification or its timeout.
 */
import type { Lane } from '@jobs/core';
import type pg from 'pg';

export interface Listener {
  /** Resolves with a lane notified since the last `take` of it, or null after `timeoutMs`. */
  wait(lanes: readonly Lane[], timeoutMs: number): Promise<Lane | null>;
  /** Forgets a lane's pending wake-up: called as a claim on it starts (the claim sees what was pushed before). */
  take(lane: Lane): void;
  onCancel(handler: (ids: string[]) => void): Promise<() => void>;
  close(): Promise<void>;
}

/** Reconnecting after a lost connection waits this long, so a database restart is not met with a busy loop. */
const RECONNECT_MS = 1000;

export function createListener(connect: () => pg.Client, lanes: readonly Lane[]): Listener {
  let client: pg.Client | null = null;
  let ready: Promise<void> | null = null;
  let closed = false;
  let retryAt = 0;
  let reconnectTimer: NodeJS.Timeout | null = null;
  /** A connection was lost and no LISTEN has succeeded since. */
  let reconnecting = false;
  const pending = new Set<Lane>();
  const waiters = new Set<() => void>();
  const cancelHandlers = new Set<(ids: string[]) => void>();
  let channels = { work: '', cancel: '' };

  const wakeAll = () => {
    for (const w of [...waiters]) w();
  };

  function lost(failed: pg.Client) {
    if (client !== failed) return;
    client = null;
    ready = null;
    retryAt = Date.now() + RECONNECT_MS;
    reconnecting = true;
    failed.end().catch(() => undefined);
    // Notifications sent while it was away are lost: every lane may have work.
    for (const lane of lanes) pending.add(lane);
    wakeAll();
    if (cancelHandlers.size > 0 && !closed && !reconnectTimer) {
      reconnectTimer = setTimeout(() => {
        reconnectTimer = null;
        void ensure().catch(() => undefined);
      }, RECONNECT_MS);
      // Not unref'd: while the database is away nothing else may keep a worker process's event loop alive (its pool
      // has no connection left, its own timers are unref'd), and it would exit, with code 0, in the middle of an
      // outage. close() clears it.
    }
  }

  function ensure(): Promise<void> {
    if (closed) return Promise.reject(new Error('queue listener closed'));
    if (ready) return ready;
    const wait = retryAt - Date.now();
    const c = connect();
    client = c;
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    c.on('notification', (n) => {
      if (n.channel === channels.work) {
        pending.add(n.payload as Lane);
        wakeAll();
      } else if (n.channel === channels.cancel && n.payload) {
        const ids = n.payload.split(',').filter(Boolean);
        for (const h of cancelHandlers) h(ids);
      }
    });
    ready = (async () => {
      if (wait > 0) await sleep(wait);
      await c.connect();
      const { rows } = await c.query(`SELECT queue_channel('work') AS work, queue_channel('cancel') AS cancel`);
      channels = rows[0];
      await c.query(`LISTEN "${channels.work}"; LISTEN "${channels.cancel}"`);
      // What was pushed between the loss and this LISTEN woke no one: every lane may have work (the loss said so
      // too, but only to the claims made before the reconnect), or a waiting worker would sleep until its timeout.
      if (reconnecting) {
        reconnecting = false;
        for (const lane of lanes) pending.add(lane);
        wakeAll();
      }
    })();
    ready.catch(() => lost(c));
    return ready;
  }

  return {
    async wait(want, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      try {
        await Promise.race([ensure(), sleep(timeoutMs)]);
      } catch {
        await sleep(Math.max(0, deadline - Date.now()));
        return null;
      }
      return new Promise<Lane | null>((resolve) => {
        const check = () => {
          const lane = want.find((l) => pending.has(l));
          if (lane === undefined) return false;
          pending.delete(lane);
          done(lane);
          return true;
        };
        const done = (lane: Lane | null) => {
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(lane);
        };
        const waiter = () => void check();
        const timer = setTimeout(() => done(null), Math.max(0, deadline - Date.now()));
        timer.unref?.();
        if (!check()) waiters.add(waiter);
      });
    },

    take(lane) {
      pending.delete(lane);
    },

    async onCancel(handler) {
      cancelHandlers.add(handler);
      await ensure();
      return () => void cancelHandlers.delete(handler);
    },

    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const c = client;
      client = null;
      ready = null;
      wakeAll();
      if (c) await c.end().catch(() => undefined);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
