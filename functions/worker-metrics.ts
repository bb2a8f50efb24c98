/**
 * @module worker-metrics — `npm run worker`'s own series on METRICS_PORT (127.0.0.1 only; a sidecar in the same
 * task or host scrapes it): claims, attempts by outcome, slots in use, how long the recorder's flushes take, and
 * prom-client's default process metrics (event-loop lag among them). Per process by nature; the system-wide series
 * are the API's /metrics. Nothing here is built unless METRICS_PORT is set.
 */
import { SnapshotRegistry } from '@jobs/api';
import type { Worker, WorkerStore } from '@jobs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

const FLUSH_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const OUTCOMES = ['started', 'succeeded', 'failed', 'dead', 'rejected', 'skipped', 'released'] as const;

export interface WorkerMetrics {
  /** The store with its recorder flushes timed (executionsRecord: one statement per flush). */
  timed<S extends Pick<WorkerStore, 'executionsRecord'>>(store: S): S;
  /** Serves GET /metrics for `worker`; resolves with the port once listening. */
  serve(
    worker: Worker,
    options: { port: number; token: string | null },
  ): Promise<{ port: number; close(): Promise<void> }>;
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const flush = new Histogram({
    name: 'jobs_worker_flush_seconds',
    help: 'Time of one recorder flush: start records and outcomes written in one statement.',
    labelNames: ['result'] as const,
    buckets: FLUSH_BUCKETS,
    registers: [registry],
  });

  const render = async (worker: Worker): Promise<string> => {
    const own = new SnapshotRegistry();
    const labels = { worker_id: worker.id };
    own.counter('jobs_worker_claimed_total', 'Ids this worker claimed from Redis.', [
      { labels, value: worker.counts.claimed },
    ]);
    own.counter(
      'jobs_worker_attempts_total',
      'Attempts of this worker by what happened: started, an outcome recorded, rejected (stale token), skipped, released (given back).',
      OUTCOMES.map((outcome) => ({ labels: { ...labels, outcome }, value: worker.counts[outcome] })),
    );
    own.gauge('jobs_worker_in_flight', 'Attempts this worker runs or has claimed, now.', [
      { labels, value: worker.inFlight },
    ]);
    return `${await registry.metrics()}\n${await own.metrics()}`;
  };

  return {
    timed(store) {
      const record = store.executionsRecord.bind(store);
      return {
        ...store,
        executionsRecord: async (input: Parameters<typeof record>[0]) => {
          const end = flush.startTimer();
          try {
            const result = await record(input);
            end({ result: 'ok' });
            return result;
          } catch (error) {
            end({ result: 'error' });
            throw error;
          }
        },
      };
    },
    async serve(worker, options) {
      const expected = options.token ? createHash('sha256').update(options.token).digest() : null;
      const server: Server = createServer((req, res) => {
        if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
          res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: GET /metrics\n');
          return;
        }
        if (expected) {
          const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
          if (!timingSafeEqual(createHash('sha256').update(given).digest(), expected)) {
            res
              .writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer realm="jobs"' })
              .end('unauthorized\n');
            return;
          }
        }
        render(worker).then(
          (text) => res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(text),
          (error) =>
            res
              .writeHead(500, { 'Content-Type': 'text/plain' })
              .end(`metrics failed: ${String(error).slice(0, 200)}\n`),
        );
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, '127.0.0.1', () => resolve());
      });
      return {
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  };
}
