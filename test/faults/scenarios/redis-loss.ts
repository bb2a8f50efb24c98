/**
 * 2. Redis loses everything during load, twice: a SIGKILL and a restart with an empty dataset (scripts, queue,
 * leases and delivery counters all gone), then a FLUSHALL. The API keeps acknowledging (rows commit in PostgreSQL
 * first), workers keep running what they hold, and the reconciler pushes every waiting execution back.
 * Recovery: from Redis answering again (or the flush) until every execution that was waiting at that moment has
 * been picked up again.
 */
import { checkBooks } from '../books';
import { createScenario, rng, sleep, startLoad, triggerMany, waitUntil, type Ack, type Scenario } from '../harness';
import { verdict, type ScenarioDef } from '../types';
import { checkFireTimes, cronTimes, standardMix } from './common';

async function waitingIds(s: Scenario): Promise<string[]> {
  const rows = await s.q<{ id: string }>(`SELECT id::text FROM executions WHERE status IN ('queued', 'retrying')`);
  return rows.map((r) => r.id);
}

/** How long until none of `ids` is still waiting, from `from`. */
async function pickedUpWithin(s: Scenario, ids: string[], from: number, timeoutMs: number): Promise<number | null> {
  if (ids.length === 0) return 0;
  const done = await waitUntil(
    async () => {
      const rows = await s.q<{ n: number }>(
        `SELECT count(*)::int AS n FROM executions WHERE id = ANY($1::bigint[]) AND status IN ('queued', 'retrying')`,
        [ids],
      );
      return rows[0]!.n === 0;
    },
    timeoutMs,
    50,
  );
  return done ? Date.now() - from : null;
}

export const redisLoss: ScenarioDef = {
  name: 'redis-restart-flush',
  async run(ctx) {
    const random = rng(ctx.seed + 2);
    const s = await createScenario(ctx.servers, 'redis-restart-flush', ctx.logRoot);
    const redis = ctx.servers.redis;
    try {
      const { client } = await s.api({ WORKER_CONCURRENCY: '2' });
      s.spawn('scheduler');
      const mix = await standardMix(client, random, { napMaxMs: 1000 });
      // Fire times materialised ahead (LOOKAHEAD) sit in the delayed set: Redis losing them must not lose a run.
      const cron = (await client.createJob({
        name: 'every-second',
        cron_expr: '* * * * * *',
        handler: 'noop',
        max_retries: 5,
      })) as { id: string; next_run_at: string };
      await Promise.all([s.worker(), s.worker(), s.worker()]);
      const load = startLoad(client, () => mix.pick(), { ratePerSec: 25 });
      const bursts: Ack[] = [];
      const problems: string[] = [];
      const recoveries: string[] = [];

      await sleep(4000);
      // A backlog (ready and delayed ids) for Redis to lose.
      bursts.push(...(await triggerMany(client, () => mix.pick(), 150)));
      // SIGKILL and an empty restart after 1.5 s down.
      await redis.kill();
      const downAt = Date.now();
      await sleep(1500);
      await redis.start();
      const upAt = Date.now();
      const waitingAtRestart = await waitingIds(s);
      const restartRecovery = await pickedUpWithin(s, waitingAtRestart, upAt, 30_000);
      if (restartRecovery === null)
        problems.push(
          `after the Redis restart, ${waitingAtRestart.length} waiting executions were not picked up within 30 s`,
        );
      recoveries.push(
        `restart ${restartRecovery === null ? 'never' : `${(restartRecovery / 1000).toFixed(2)}s`} (${waitingAtRestart.length} waiting)`,
      );
      ctx.log(
        `Redis down ${upAt - downAt} ms; ${waitingAtRestart.length} waiting executions picked up ${restartRecovery} ms after restart`,
      );

      await sleep(3000);
      bursts.push(...(await triggerMany(client, () => mix.pick(), 150)));
      const waitingAtFlush = await waitingIds(s);
      const flushAt = Date.now();
      redis.cli('FLUSHALL');
      const flushRecovery = await pickedUpWithin(s, waitingAtFlush, flushAt, 30_000);
      if (flushRecovery === null)
        problems.push(`after FLUSHALL, ${waitingAtFlush.length} waiting executions were not picked up within 30 s`);
      recoveries.push(
        `flush ${flushRecovery === null ? 'never' : `${(flushRecovery / 1000).toFixed(2)}s`} (${waitingAtFlush.length} waiting)`,
      );
      ctx.log(`FLUSHALL; ${waitingAtFlush.length} waiting executions picked up ${flushRecovery} ms after it`);

      await sleep(4000);
      await load.stop();
      await client.request('POST', `/api/v1/jobs/${cron.id}/pause`);
      ctx.log(`${load.acks.length + bursts.length} acknowledged, refused ${JSON.stringify(load.refused)}`);
      const books = await checkBooks(
        s,
        [...load.acks, ...bursts].map((a) => a.root),
      );
      const fires = await checkFireTimes(s, [{ id: cron.id, nextRunAt: cron.next_run_at }], cronTimes('* * * * * *'));
      problems.push(...fires.problems);
      const health = await client.request('GET', '/healthz');
      if (health.status !== 200) problems.push(`healthz after the faults: ${health.status} ${health.text}`);
      return verdict(books, {
        problems,
        recovery: recoveries.join(', '),
        notes: [`refused triggers: ${JSON.stringify(load.refused)}`, `cron fire times checked: ${fires.fireTimes}`],
      });
    } finally {
      await s.close();
    }
  },
};
