/**
 * 7. A worker that stalls past its lease: SIGSTOP while it runs attempts, kept stopped past LEASE_TIMEOUT and a
 * reaper pass (until the attempts that replace its attempts have started on another worker), then SIGCONT. Its
 * stale outcomes must be rejected and logged `execution.outcome_rejected` (or, if its heartbeat notices first,
 * the attempt is stopped: `execution.lease_lost`), never written over the attempt that replaced them.
 * Recovery: from SIGSTOP to the start of each replacement attempt.
 */
import { checkBooks } from '../books';
import { createScenario, rng, sleep, startLoad, triggerMany, waitUntil } from '../harness';
import { verdict, type ScenarioDef } from '../types';
import { runningOf, standardMix, summarise } from './common';

const STALLED = 8;

export const stall: ScenarioDef = {
  name: 'stalled-worker-sigstop',
  postgresQueue: true,
  async run(ctx) {
    const random = rng(ctx.seed + 7);
    const s = await createScenario(ctx.servers, 'stalled-worker-sigstop', ctx.logRoot, ctx.queue);
    try {
      const { client } = await s.api({ WORKER_CONCURRENCY: '2', WORKER_LANES: 'short' });
      s.spawn('scheduler');
      const mix = await standardMix(client, random, { napMaxMs: 800 });
      await Promise.all([s.worker({ WORKER_LANES: 'short' }), s.worker({ WORKER_LANES: 'short' })]);
      // The stalled worker alone serves the long lane until it is stopped.
      const staller = await s.worker({ WORKER_LANES: 'long', WORKER_CONCURRENCY: '8' });
      const job = await client.createJob({
        name: 'stall-nap',
        handler: 'nap',
        lane: 'long',
        max_retries: 2,
        backoff: { base_seconds: 0, max_seconds: 0 },
      });
      const load = startLoad(client, () => mix.pick(), { ratePerSec: 15 });
      await sleep(1000);

      const acks = await triggerMany(client, () => ({ jobId: job.id, payload: { ms: 1500 } }), STALLED, STALLED);
      const held = await waitUntil(
        async () => {
          const ids = await runningOf(s, staller.workerId);
          return ids.length === STALLED ? ids : null;
        },
        5000,
        20,
      );
      const problems: string[] = [];
      if (!held) problems.push(`the staller did not start all ${STALLED} attempts`);
      const ids = held ?? (await runningOf(s, staller.workerId));
      staller.signal('SIGSTOP');
      const stoppedAt = Date.now();
      await s.worker({ WORKER_LANES: 'long', WORKER_CONCURRENCY: '8' });
      // Stay stopped until every stalled attempt was replaced and its replacement started elsewhere.
      const replaced = await waitUntil(
        async () => {
          const rows = await s.q<{ n: number }>(
            `SELECT count(*)::int AS n FROM executions r JOIN executions e ON r.retry_of = e.id
           WHERE e.id = ANY($1::bigint[]) AND r.started_at IS NOT NULL`,
            [ids],
          );
          return rows[0]!.n === ids.length;
        },
        15_000,
        50,
      );
      if (!replaced) problems.push('the stalled attempts were not replaced within 15 s');
      const stalledMs = Date.now() - stoppedAt;
      staller.signal('SIGCONT');
      // Its naps (1.5 s) are overdue by now: they finish at once and the worker tries to record them.
      await sleep(4000);
      await load.stop();
      ctx.log(`stalled ${stalledMs} ms holding ${ids.length} attempts`);

      const books = await checkBooks(
        s,
        [...load.acks, ...acks].map((a) => a.root),
      );
      const rows = await s.q<{
        id: string;
        status: string;
        error: string | null;
        output: string | null;
        retry_status: string | null;
        retry_worker: string | null;
        retry_started: Date | null;
      }>(
        `SELECT e.id::text, e.status, e.error, e.output, r.status AS retry_status, r.worker_id AS retry_worker, r.started_at AS retry_started
         FROM executions e LEFT JOIN executions r ON r.retry_of = e.id WHERE e.id = ANY($1::bigint[])`,
        [ids],
      );
      for (const r of rows) {
        if (r.status !== 'failed' || !/lease expired/.test(r.error ?? '') || r.output !== null) {
          problems.push(
            `stalled attempt ${r.id} was overwritten or not reaped: ${r.status} / ${r.error} / output ${JSON.stringify(r.output)}`,
          );
        }
        if (r.retry_status !== 'succeeded' || r.retry_worker === staller.workerId) {
          problems.push(
            `the replacement of ${r.id} did not succeed on another worker: ${r.retry_status} by ${r.retry_worker}`,
          );
        }
      }
      const rejected = new Set(staller.events('execution.outcome_rejected').map((e) => String(e.execution_id)));
      const lost = new Set(staller.events('execution.lease_lost').map((e) => String(e.execution_id)));
      const unaccounted = ids.filter((id) => !rejected.has(id) && !lost.has(id));
      if (rejected.size === 0) problems.push('the stalled worker logged no execution.outcome_rejected');
      if (unaccounted.length > 0)
        problems.push(`stale attempts neither rejected nor stopped by the resumed worker: ${unaccounted.join(' ')}`);
      if (!staller.alive) problems.push(`the resumed worker exited: ${JSON.stringify(staller.exitInfo)}`);
      const delays = rows.filter((r) => r.retry_started).map((r) => r.retry_started!.getTime() - stoppedAt);
      return verdict(books, {
        problems,
        recovery: summarise(delays, 'SIGSTOP → replacement start'),
        notes: [
          `stalled ${(stalledMs / 1000).toFixed(1)} s; on SIGCONT: ${rejected.size} outcomes rejected, ${lost.size} attempts stopped on lease loss`,
        ],
      });
    } finally {
      await s.close();
    }
  },
};
