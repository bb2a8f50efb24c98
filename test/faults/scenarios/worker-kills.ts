/**
 * 1. Worker processes killed with SIGKILL at random moments, again and again, while the API takes triggers; a new
 * worker is started after each kill. Recovery: from the kill to the start of the attempt that replaced each
 * attempt the dead worker held (target: LEASE_TIMEOUT plus one reaper interval). Command jobs count their side
 * effects in files (side-effects.ts): a killed attempt's processes must die with its worker.
 */
import { rmSync } from 'node:fs';
import { sharedDir } from '../../support/procs';
import { checkBooks } from '../books';
import { createScenario, rng, sleep, startLoad, TIMING, waitUntil, type Proc } from '../harness';
import { verdict, type ScenarioDef } from '../types';
import { replacementDelays, runningOf, standardMix, summarise } from './common';
import { checkEffects, createEffectJobs, leftoverProcesses } from './side-effects';

const KILLS = 22;
const WORKERS = 3;

export const workerKills: ScenarioDef = {
  name: 'worker-sigkill',
  postgresQueue: true,
  async run(ctx) {
    const random = rng(ctx.seed);
    const s = await createScenario(ctx.servers, 'worker-sigkill', ctx.logRoot, ctx.queue);
    const dir = sharedDir('faults-effects');
    try {
      const { client } = await s.api({ WORKER_CONCURRENCY: '2' });
      s.spawn('scheduler');
      const mix = await standardMix(client, random);
      const effectJobs = await createEffectJobs(client, dir, 'kills');
      const workers: (Proc & { workerId: string })[] = await Promise.all(
        Array.from({ length: WORKERS }, () => s.worker()),
      );
      const pick = () => (random() < 0.05 ? { jobId: effectJobs.effectId } : mix.pick());
      const load = startLoad(client, pick, { ratePerSec: 25 });

      const orphans: { id: string; killedAt: number }[] = [];
      let kills = 0;
      const starting: Promise<unknown>[] = [];
      const startFailures: string[] = [];
      while (kills < KILLS) {
        await sleep(500 + random() * 1300);
        // Never kill the last worker standing: replacements may still be starting.
        const alive = workers.filter((w) => w.alive);
        if (alive.length < 2) continue;
        const victim = alive[Math.floor(random() * alive.length)]!;
        const killedAt = Date.now();
        await victim.kill();
        kills++;
        for (const id of await runningOf(s, victim.workerId)) orphans.push({ id, killedAt });
        starting.push(
          s.worker().then(
            (w) => workers.push(w),
            (e: Error) => startFailures.push(e.message),
          ),
        );
      }
      await Promise.all(starting);
      await sleep(1000);
      await load.stop();
      await client.request('POST', `/api/v1/jobs/${effectJobs.forbidId}/pause`);
      ctx.log(
        `${kills} kills, ${orphans.length} attempts orphaned, ${load.acks.length} acknowledged, refused ${JSON.stringify(load.refused)}`,
      );

      const books = await checkBooks(
        s,
        load.acks.map((a) => a.root),
      );
      const effects = checkEffects(effectJobs, new Map(orphans.map((o) => [o.id, o.killedAt])));
      const own = () => new Set(s.procs.filter((p) => p.alive).map((p) => p.pid));
      // A supervisor may still be reaping what its attempt left; give them a moment before calling it a leak.
      const left = (await waitUntil(async () => leftoverProcesses(s.prefix, own()).length === 0, 3000))
        ? []
        : leftoverProcesses(s.prefix, own());
      const { delays, detection, queueing, missing } = await replacementDelays(s, orphans);
      const problems: string[] = [...effects.problems];
      if (left.length > 0)
        problems.push(
          `${left.length} processes of the scenario's jobs still alive after the drain: ${left.slice(0, 5).join('; ')}`,
        );
      if (kills < 20) problems.push(`only ${kills} kills`);
      if (startFailures.length > 0)
        problems.push(`${startFailures.length} replacement workers failed to start: ${startFailures[0]}`);
      if (missing.length > 0) problems.push(`orphaned attempts never replaced: ${missing.slice(0, 5).join(' ')}`);
      const target = TIMING.leaseMs + TIMING.scheduleIntervalMs;
      // The engine's part: a dead worker's attempts are failed within the lease plus one reaper interval (with
      // 500 ms for the pass itself); the rest of the recovery is the retry waiting for a free slot.
      const lateDetection = detection.filter((d) => d > target + 500);
      if (lateDetection.length > 0)
        problems.push(
          `${lateDetection.length} orphaned attempts detected later than ${target + 500} ms (max ${Math.max(...lateDetection)} ms)`,
        );
      const slow = delays.filter((d) => d > target + 1500);
      const notes = [
        `${kills} SIGKILLs, ${orphans.length} orphaned attempts; recovery target ${target} ms (lease + reaper interval)`,
        ...effects.notes,
      ];
      notes.push(
        `detection (kill → failure recorded) ${summarise(detection, 'reaper')}; queueing (retry queued → started) ${summarise(queueing, 'queue')}`,
      );
      if (slow.length > 0)
        notes.push(`${slow.length} replacements took longer than target + 1.5 s (max ${Math.max(...slow)} ms)`);
      return verdict(books, { problems, notes, recovery: summarise(delays, 'kill → replacement start') });
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
