/**
 * 5. Graceful shutdown during load. Worker processes get SIGTERM at random moments (a replacement is started each
 * time): each exits 0, the attempts it was running finish and are recorded by it (same attempt, no retry used),
 * and it leaves nothing running or registered. Then a worker whose SHUTDOWN_GRACE (300 ms) is shorter than its
 * attempts: they go back to the queue as the same attempt and another worker runs them. Finally the scheduler
 * and the API process (local.ts, which also runs a worker) get SIGTERM while triggers are coming in.
 */
import { checkBooks } from '../books';
import { createScenario, rng, sleep, startLoad, triggerMany, waitUntil, type Ack, type Proc } from '../harness';
import { verdict, type ScenarioDef } from '../types';
import { runningOf, standardMix } from './common';

const ROUNDS = 6;

export const sigterm: ScenarioDef = {
  name: 'graceful-sigterm',
  postgresQueue: true,
  async run(ctx) {
    const random = rng(ctx.seed + 5);
    const s = await createScenario(ctx.servers, 'graceful-sigterm', ctx.logRoot, ctx.queue);
    try {
      const short = { WORKER_LANES: 'short', SHUTDOWN_GRACE: '10s' };
      const { proc: api, client } = await s.api({ WORKER_CONCURRENCY: '2', WORKER_LANES: 'short' });
      let scheduler = s.spawn('scheduler');
      const mix = await standardMix(client, random, { napMaxMs: 1500 });
      const longNap = await client.createJob({
        name: 'long-nap',
        handler: 'nap',
        lane: 'long',
        max_retries: 0,
        timeout_seconds: 60,
      });
      const workers: (Proc & { workerId: string })[] = await Promise.all([
        s.worker(short),
        s.worker(short),
        s.worker(short),
      ]);
      const load = startLoad(client, () => mix.pick(), { ratePerSec: 20 });
      const extra: Ack[] = [];
      const problems: string[] = [];
      const stopTimes: number[] = [];
      let finishedInFlight = 0;

      for (let round = 0; round < ROUNDS; round++) {
        await sleep(1000 + random() * 1500);
        const alive = workers.filter((w) => w.alive);
        const victim = alive[Math.floor(random() * alive.length)]!;
        const inFlight = await runningOf(s, victim.workerId);
        const signalledAt = Date.now();
        victim.signal('SIGTERM');
        const replacement = s.worker(short).then(
          (w) => void workers.push(w),
          (e: Error) => void problems.push(`a replacement worker failed to start: ${e.message}`),
        );
        const exit = await victim.exited;
        stopTimes.push(Date.now() - signalledAt);
        await replacement;
        if (exit.code !== 0) problems.push(`${victim.name} exited with ${JSON.stringify(exit)} on SIGTERM`);
        const still = await runningOf(s, victim.workerId);
        if (still.length > 0) problems.push(`${victim.name} left ${still.length} executions running`);
        const registered = await s.q(`SELECT 1 FROM workers WHERE id = $1`, [victim.workerId]);
        if (registered.length > 0) problems.push(`${victim.name} is still registered after a clean exit`);
        if (inFlight.length > 0) {
          const rows = await s.q<{ id: string; status: string; worker_id: string; attempt: number }>(
            `SELECT id::text, status, worker_id, attempt FROM executions WHERE id = ANY($1::bigint[])`,
            [inFlight],
          );
          const notFinished = rows.filter((r) => r.status !== 'succeeded' || r.worker_id !== victim.workerId);
          finishedInFlight += rows.length - notFinished.length;
          if (notFinished.length > 0) {
            problems.push(
              `${notFinished.length}/${inFlight.length} attempts in flight at SIGTERM were not finished by their worker (e.g. ${notFinished[0]!.id}: ${notFinished[0]!.status})`,
            );
          }
        }
      }

      // Grace shorter than the attempts: they are given back as the same attempt.
      const quick = await s.worker({ WORKER_LANES: 'long', SHUTDOWN_GRACE: '300ms', WORKER_CONCURRENCY: '4' });
      const naps = await triggerMany(client, () => ({ jobId: longNap.id, payload: { ms: 4000 } }), 4, 4);
      extra.push(...naps);
      const held = await waitUntil(
        async () => {
          const ids = await runningOf(s, quick.workerId);
          return ids.length === naps.length ? ids : null;
        },
        5000,
        50,
      );
      if (!held) problems.push('the short-grace worker did not start the long attempts');
      quick.signal('SIGTERM');
      const quickExit = await quick.exited;
      if (quickExit.code !== 0) problems.push(`short-grace worker exited with ${JSON.stringify(quickExit)}`);
      const released = await s.q<{ id: string; status: string; attempt: number; worker_id: string | null }>(
        `SELECT id::text, status, attempt, worker_id FROM executions WHERE id = ANY($1::bigint[])`,
        [naps.map((n) => n.root)],
      );
      const notReleased = released.filter((r) => r.status !== 'queued' || r.attempt !== 1 || r.worker_id !== null);
      if (notReleased.length > 0)
        problems.push(
          `attempts still running at the end of the grace were not given back as queued: ${notReleased.map((r) => `${r.id}:${r.status}`).join(' ')}`,
        );
      await s.worker({ WORKER_LANES: 'long' });

      // The scheduler and the API process, while triggers keep coming.
      scheduler.signal('SIGTERM');
      const schedulerExit = await scheduler.exited;
      if (schedulerExit.code !== 0) problems.push(`scheduler exited with ${JSON.stringify(schedulerExit)} on SIGTERM`);
      scheduler = s.spawn('scheduler');
      await sleep(1000);
      const apiStopAt = Date.now();
      api.signal('SIGTERM');
      const apiExit = await api.exited;
      const apiStopMs = Date.now() - apiStopAt;
      if (apiExit.code !== 0) problems.push(`API process exited with ${JSON.stringify(apiExit)} on SIGTERM`);
      await load.stop();

      const books = await checkBooks(
        s,
        [...load.acks, ...extra].map((a) => a.root),
      );
      // Released long attempts ran to success as attempt 1 on another worker: a shutdown did not use a retry.
      const after = await s.q<{ root: string; statuses: string }>(
        `SELECT coalesce(root_id, id)::text AS root, string_agg(attempt || ':' || status, ',' ORDER BY attempt) AS statuses
         FROM executions WHERE coalesce(root_id, id) = ANY($1::bigint[]) GROUP BY 1`,
        [naps.map((n) => n.root)],
      );
      const spent = after.filter((r) => r.statuses !== '1:succeeded');
      if (spent.length > 0)
        problems.push(
          `released attempts did not finish as attempt 1: ${spent.map((r) => `${r.root}[${r.statuses}]`).join(' ')}`,
        );
      return verdict(books, {
        problems,
        recovery: `worker stop p50 ${(stopTimes.sort((a, b) => a - b)[Math.floor(stopTimes.length / 2)]! / 1000).toFixed(2)}s, API stop ${(apiStopMs / 1000).toFixed(2)}s`,
        notes: [
          `${ROUNDS} worker SIGTERMs: ${finishedInFlight} in-flight attempts finished by their own worker; stop times ${stopTimes.map((t) => (t / 1000).toFixed(1)).join('/')} s`,
          `triggers refused (the API was stopped at the end): ${JSON.stringify(load.refused)}`,
        ],
      });
    } finally {
      await s.close();
    }
  },
};
