/**
 * 3. PostgreSQL restarts during load: a fast restart, a crash (immediate) restart, and a crash followed by 4 s of
 * downtime during which attempts that started before it finish. Workers, the scheduler and the API must reconnect
 * on their own, and an outcome computed while the database was away must be recorded once it is back: the attempt
 * ends succeeded as attempt 1, by the worker that ran it, not failed by the reaper and run again.
 * Recovery: from the database accepting connections again to the API's first acknowledged trigger.
 */
import { checkBooks } from '../books';
import { createScenario, rng, sleep, startLoad, waitUntil, type Ack, type ApiClient } from '../harness';
import { verdict, type RunContext, type ScenarioDef } from '../types';
import { standardMix } from './common';

const OUTAGE_MS = 4000;
const OUTAGE_NAP_MS = 2500;

async function runPostgres(ctx: RunContext, name: string, options: { restarts: boolean; judgeOutage: boolean }) {
  const random = rng(ctx.seed + 3);
  const s = await createScenario(ctx.servers, name, ctx.logRoot, ctx.queue);
  const pg = ctx.servers.pg;
  try {
    const { proc: api, client } = await s.api({ WORKER_CONCURRENCY: '2' });
    const scheduler = s.spawn('scheduler');
    const mix = await standardMix(client, random, { napMaxMs: 800 });
    const outageJob = await client.createJob({
      name: 'finishes-during-outage',
      handler: 'nap',
      max_retries: 3,
      timeout_seconds: 60,
    });
    const workers = await Promise.all([s.worker(), s.worker(), s.worker()]);
    const load = startLoad(client, () => mix.pick(), { ratePerSec: 20 });
    const problems: string[] = [];
    const apiBack: number[] = [];
    const extraAcks: Ack[] = [];

    /** Time from `from` until a trigger is acknowledged again. */
    const firstAckAfter = async (from: number) => {
      const ok = await waitUntil(async () => load.acks.some((a) => a.at > from), 30_000, 50);
      const ack = load.acks.find((a) => a.at > from);
      return ok && ack ? ack.at - from : null;
    };

    let back = Date.now();
    if (options.restarts) {
      await sleep(4000);
      pg.restart('fast');
      back = Date.now();
      const fast = await firstAckAfter(back);
      if (fast === null) problems.push('the API acknowledged nothing within 30 s of a fast restart');
      else apiBack.push(fast);
      ctx.log(`fast restart: API acknowledging again after ${fast} ms`);
    }

    await sleep(3000);
    // Attempts that will finish while the database is down.
    const outage: { id: string; workerId: string | null }[] = [];
    // Triggered together: one after the other, a loaded machine can take longer than a nap for the twelve.
    const triggered = await Promise.all(
      Array.from({ length: 12 }, () => triggerOnce(client, outageJob.id, { ms: OUTAGE_NAP_MS })),
    );
    for (const res of triggered) {
      if (res) {
        extraAcks.push(res);
        outage.push({ id: res.root, workerId: null });
      }
    }
    const running = await waitUntil(
      async () => {
        const rows = await s.q<{ id: string; worker_id: string }>(
          `SELECT id::text, worker_id FROM executions WHERE id = ANY($1::bigint[]) AND status = 'running'`,
          [outage.map((o) => o.id)],
        );
        return rows.length === outage.length ? rows : null;
      },
      5000,
      20,
    );
    if (!running) problems.push('the outage attempts did not all start within 5 s');
    for (const r of running ?? []) outage.find((o) => o.id === r.id)!.workerId = r.worker_id;
    pg.stopServer('immediate');
    const downAt = Date.now();
    await sleep(OUTAGE_MS);
    pg.startAgain();
    back = Date.now();
    ctx.log(`PostgreSQL down ${back - downAt} ms (crash), the ${outage.length} outage attempts finished meanwhile`);
    const afterOutage = await firstAckAfter(back);
    if (afterOutage === null) problems.push(`the API acknowledged nothing within 30 s of PostgreSQL coming back`);
    else apiBack.push(afterOutage);

    if (options.restarts) {
      await sleep(3000);
      pg.restart('immediate');
      back = Date.now();
      const crash = await firstAckAfter(back);
      if (crash === null) problems.push('the API acknowledged nothing within 30 s of an immediate restart');
      else apiBack.push(crash);
      ctx.log(`immediate restart: API acknowledging again after ${crash} ms`);
    }

    await sleep(3000);
    await load.stop();
    const books = await checkBooks(
      s,
      [...load.acks, ...extraAcks].map((a) => a.root),
    );

    // Outcomes computed during the outage: recorded, once, by the worker that computed them.
    const rows = await s.q<{
      root: string;
      n: number;
      statuses: string;
      worker_id: string | null;
      duration_ms: number | null;
    }>(
      `SELECT coalesce(root_id, id)::text AS root, count(*)::int AS n, string_agg(attempt || ':' || status || ':' || coalesce(error, ''), ' | ' ORDER BY attempt) AS statuses,
              (array_agg(worker_id ORDER BY attempt))[1] AS worker_id, (array_agg(duration_ms ORDER BY attempt))[1] AS duration_ms
       FROM executions WHERE coalesce(root_id, id) = ANY($1::bigint[]) GROUP BY 1`,
      [outage.map((o) => o.id)],
    );
    const lostOutcomes = rows.filter((r) => {
      const o = outage.find((x) => x.id === r.root)!;
      return r.n !== 1 || !r.statuses.startsWith('1:succeeded') || r.worker_id !== o.workerId;
    });
    if (lostOutcomes.length > 0 && options.judgeOutage) {
      problems.push(
        `${lostOutcomes.length} of ${outage.length} outcomes computed while PostgreSQL was down were not recorded as such ` +
          `(e.g. ${lostOutcomes[0]!.root}: ${lostOutcomes[0]!.statuses})`,
      );
    }
    for (const p of [api, scheduler, ...workers])
      if (!p.alive) problems.push(`${p.name} exited: ${JSON.stringify(p.exitInfo)}`);
    const health = await client.request('GET', '/healthz');
    if (health.status !== 200) problems.push(`healthz after the restarts: ${health.status} ${health.text}`);
    return verdict(books, {
      problems,
      recovery: `API back after ${apiBack.map((ms) => `${(ms / 1000).toFixed(2)}s`).join(' / ')} (${options.restarts ? 'fast / outage / crash' : 'outage'})`,
      notes: [
        `triggers refused while the database was away: ${JSON.stringify(load.refused)}`,
        `${outage.length - lostOutcomes.length}/${outage.length} outcomes computed during the outage recorded by the worker that computed them` +
          (options.judgeOutage ? '' : ' (judged by postgres-outage-outcomes)'),
      ],
    });
  } finally {
    await s.close();
  }
}

export const postgresRestart: ScenarioDef = {
  name: 'postgres-restart',
  postgresQueue: true,
  run: (ctx) => runPostgres(ctx, 'postgres-restart', { restarts: true, judgeOutage: false }),
};

// Not on the PostgreSQL queue: an outcome survives an outage longer than the lease because the worker keeps renewing
// its Redis lease meanwhile (the reaper then leaves the attempt alone). With the queue in the database that is down,
// nothing vouches for the attempt: the reaper may fail it once the database is back, the late outcome is rejected
// and a retry runs (recorded once all the same). postgres-restart covers the restarts on that queue.
export const postgresOutageOutcomes: ScenarioDef = {
  name: 'postgres-outage-outcomes',
  run: (ctx) => runPostgres(ctx, 'postgres-outage-outcomes', { restarts: false, judgeOutage: true }),
};

async function triggerOnce(client: ApiClient, jobId: string, payload: unknown): Promise<Ack | null> {
  const res = await client.request('POST', `/api/v1/jobs/${jobId}/trigger`, { body: { payload } });
  return res.status === 201 ? { root: String(res.body.root_id), jobId, at: Date.now() } : null;
}
