/**
 * A redelivered attempt is visible: given back at a worker's shutdown, or lost with its worker before its start was
 * recorded, it runs again as the same execution, and every delivery (worker, times, how it ended) is on the
 * execution in the API and the dashboard; the command sees which delivery it is in JOB_DELIVERY.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LANES, createJob, reapOnce, triggerJob } from '@jobs/core';
import { apiHarness, type Harness } from './api/harness';
import { eventually } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';
import { expireLease } from './support/queue-probe';

let h: Harness;
let e: ReturnType<typeof engine>;

beforeEach(async () => {
  h = await apiHarness();
  e = engine(h.env);
});
afterEach(async () => {
  await e.stopAll(0);
  await h.cleanup();
});

// The first delivery waits to be given back; a later one ends at once.
const COMMAND = 'echo "delivery $JOB_DELIVERY of attempt $JOB_ATTEMPT"; [ "$JOB_DELIVERY" -gt 1 ] || sleep 30';

describe('a redelivered attempt', () => {
  it('records each delivery when a worker gives the attempt back at shutdown, and shows them', async () => {
    const job = await createJob(e.deps, jobSpec({ command: COMMAND, maxRetries: 0 }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    const first = await e.worker();
    await eventually(async () => (await h.env.store.executionGet(execution.id))?.status === 'running');
    await first.stop({ graceMs: 0 });
    expect((await h.env.store.executionGet(execution.id))?.status).toBe('queued');

    const second = await e.worker();
    await eventually(async () => (await h.env.store.executionGet(execution.id))?.status === 'succeeded');

    const res = await h.call('GET', `/api/v1/executions/${execution.id}`);
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body.attempt).toBe(1);
    expect(body.output).toBe('delivery 2 of attempt 1\n');
    expect(body.delivery_count).toBe(2);
    expect(body.deliveries).toHaveLength(2);
    expect(body.deliveries[0]).toMatchObject({ worker_id: first.id, outcome: 'released' });
    expect(body.deliveries[1]).toMatchObject({ worker_id: second.id, outcome: 'succeeded' });
    const [a, b] = body.deliveries;
    expect(Date.parse(a.started_at)).toBeLessThanOrEqual(Date.parse(a.ended_at));
    expect(Date.parse(a.ended_at)).toBeLessThanOrEqual(Date.parse(b.started_at));
    expect(b.started_at).toBe(body.started_at);
    expect(b.ended_at).toBe(body.finished_at);
    // Lists stay lean: no delivery history in a page of executions.
    const list = await h.call('GET', `/api/v1/executions?job_id=${job.id}`);
    expect(list.body.data[0]).not.toHaveProperty('deliveries');

    const page = await h.call('GET', `/executions/${execution.id}`);
    expect(page.body).toContain('Deliveries');
    expect(page.body).toContain('(delivery 2)');
    expect(page.body).toContain(`delivery 1 · on ${first.id} · released at shutdown`);
    expect(page.body).toContain(`delivery 2 · on ${second.id}`);
  });

  it('records a delivery lost before its start was recorded, and the next run sees JOB_DELIVERY=2', async () => {
    const job = await createJob(e.deps, jobSpec({ command: COMMAND, maxRetries: 0 }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    // A worker claims it and dies before writing anything.
    const { claims } = await h.env.queue.claim({ lane: execution.lane, count: 1, leaseMs: 60_000 });
    expect(claims.map((c) => c.id)).toEqual([execution.id]);
    await expireLease(h.env, execution.lane, execution.id);
    expect((await reapOnce(e.deps, { lanes: LANES })).requeued).toBe(1);

    await e.worker();
    await eventually(async () => (await h.env.store.executionGet(execution.id))?.status === 'succeeded');
    const { body } = await h.call('GET', `/api/v1/executions/${execution.id}`);
    expect(body.output).toBe('delivery 2 of attempt 1\n');
    expect(body.delivery_count).toBe(2);
    expect(body.deliveries[0]).toMatchObject({ worker_id: null, started_at: null, outcome: 'lost' });
    expect(body.deliveries[1].outcome).toBe('succeeded');
  });

  it('shows one delivery for an attempt that ran once, and none before it starts', async () => {
    const job = await createJob(e.deps, jobSpec({ command: 'echo "$JOB_DELIVERY"', maxRetries: 0 }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    const waiting = await h.call('GET', `/api/v1/executions/${execution.id}`);
    expect(waiting.body).toMatchObject({ delivery_count: 0, deliveries: [] });
    const worker = await e.worker();
    await eventually(async () => (await h.env.store.executionGet(execution.id))?.status === 'succeeded');
    const { body } = await h.call('GET', `/api/v1/executions/${execution.id}`);
    expect(body.output).toBe('1\n');
    expect(body.delivery_count).toBe(1);
    expect(body.deliveries).toEqual([
      { worker_id: worker.id, started_at: body.started_at, ended_at: body.finished_at, outcome: 'succeeded' },
    ]);
    expect((await h.call('GET', `/executions/${execution.id}`)).body).not.toContain('Deliveries');
  });
});

describe('a suspect (an attempt whose worker was lost before its start was recorded)', () => {
  /** A handler that notes which attempts were running when each one started; they take `ms`, `ms * 2`, ... in turn. */
  function tracker(ms: number) {
    const active = new Set<string>();
    const starts: { id: string; alongside: string[] }[] = [];
    const track = async (ctx: { executionId: string }) => {
      starts.push({ id: ctx.executionId, alongside: [...active] });
      active.add(ctx.executionId);
      await new Promise((r) => setTimeout(r, ms * (1 + (starts.length % 3))));
      active.delete(ctx.executionId);
    };
    /** The suspect ran with nothing else on the worker: none was running when it started, none started meanwhile. */
    const ranAlone = (id: string) => {
      expect(starts.find((s) => s.id === id)?.alongside).toEqual([]);
      expect(starts.filter((s) => s.alongside.includes(id))).toEqual([]);
    };
    return { handlers: { track }, starts, active, ranAlone };
  }

  /** Triggers a job and loses its first delivery with a worker that died before recording its start. */
  async function suspectOf(jobId: string): Promise<string> {
    const { execution } = await triggerJob(e.deps, { jobId });
    const { claims } = await h.env.queue.claim({ lane: execution.lane, count: 1, leaseMs: 60_000 });
    expect(claims.map((c) => c.id)).toEqual([execution.id]);
    await expireLease(h.env, execution.lane, execution.id);
    expect((await reapOnce(e.deps, { lanes: LANES })).requeued).toBe(1);
    return execution.id;
  }

  const succeeded = async (jobIds: string[]) => {
    const { rows } = await h.env.pool.query(
      `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS ok, count(*)::int AS n FROM executions WHERE job_id = ANY($1::bigint[])`,
      [jobIds],
    );
    return rows[0].n > 0 && rows[0].ok === rows[0].n;
  };

  it('runs alone on an idle worker, which claims nothing else while it runs', async () => {
    const t = tracker(100);
    const poison = await createJob(e.deps, jobSpec({ handler: 'track', maxRetries: 0 }));
    const healthy = await createJob(e.deps, jobSpec({ handler: 'track', maxRetries: 0 }));
    const suspect = await suspectOf(poison.id);
    for (let i = 0; i < 6; i++) await triggerJob(e.deps, { jobId: healthy.id });
    await e.worker({ concurrency: 4, handlers: t.handlers });
    await eventually(() => succeeded([poison.id, healthy.id]), 15_000);
    t.ranAlone(suspect);
    // The healthy attempts still ran side by side.
    expect(Math.max(...t.starts.map((s) => s.alongside.length))).toBeGreaterThan(0);
  });

  it('is run by a busy worker once it has emptied itself, and the work behind it runs after', async () => {
    const t = tracker(300);
    const poison = await createJob(e.deps, jobSpec({ handler: 'track', maxRetries: 0, priority: 10 }));
    const healthy = await createJob(e.deps, jobSpec({ handler: 'track', maxRetries: 0 }));
    for (let i = 0; i < 8; i++) await triggerJob(e.deps, { jobId: healthy.id });
    await e.worker({ concurrency: 3, handlers: t.handlers });
    await eventually(() => t.active.size === 3);
    // Higher priority: the worker meets it first among what waits, while it is busy.
    const suspect = await suspectOf(poison.id);
    await eventually(() => succeeded([poison.id, healthy.id]), 20_000);
    t.ranAlone(suspect);
    const events = e.logs.map((l) => (l.obj as { event?: string }).event);
    expect(events).toContain('worker.suspect_turn');
    expect(events).toContain('worker.suspect_claimed');
  });
});

describe("an execution's timeline", () => {
  it('lists its steps in time order: a fire time queued ahead shows Queued above Due', async () => {
    const job = await h.createJob({ cron_expr: '0 0 1 1 *', command: 'true' });
    await e.tick(400 * 86_400_000);
    const { rows } = await h.env.pool.query('SELECT id FROM executions WHERE job_id = $1', [job.id]);
    const page = (await h.call('GET', `/executions/${rows[0].id}`)).body as string;
    const timeline = page.slice(page.indexOf('aria-label="Timeline"'));
    expect(timeline.indexOf('<strong>Queued</strong>')).toBeGreaterThan(0);
    expect(timeline.indexOf('<strong>Queued</strong>')).toBeLessThan(timeline.indexOf('<strong>Due</strong>'));
  });
});
