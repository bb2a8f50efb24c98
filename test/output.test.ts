/** Output that survives: head and tail, cancelled / timed-out / lease-lost attempts, and a running attempt's output read and followed. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cancelExecution, createJob, triggerJob } from '@jobs/core';
import { createLiveOutputBuffer, type LiveOutputBuffer } from '@jobs/core';
import { createLiveOutput, queueKeys } from '@jobs/queue';
import { createPostgresLiveOutput, postgresLiveOutputReader } from '@jobs/queue-postgres';
import { apiHarness, type Harness } from './api/harness';
import { eventually } from './support/env';
import { engine } from './support/engine';
import { jobSpec } from './support/fixtures';

let h: Harness;
let e: ReturnType<typeof engine>;
let live: LiveOutputBuffer;

/** Live output beside the file's queue: Redis streams, or the live_output table on the PostgreSQL queue. */
const liveOutput = (options: { flushMs: number; maxEntries?: number; ttlMs?: number }) =>
  h.env.backend === 'redis'
    ? createLiveOutput(h.env.redis, queueKeys(h.env.prefix), options)
    : createPostgresLiveOutput(h.env.pool, options);

beforeEach(async () => {
  h = await apiHarness();
  e = engine(h.env);
  live = liveOutput({ flushMs: 50 });
});
afterEach(async () => {
  await e.stopAll();
  await live.close();
  await h.cleanup();
});

const get = (id: string) => h.env.store.executionGet(id);
const command = (cmd: string, fields: Parameters<typeof jobSpec>[0] = {}) =>
  createJob(e.deps, jobSpec({ handler: null, command: cmd, maxRetries: 0, ...fields }));

/** Reads an SSE response to its end (or `untilMs`), as [event, data] pairs. */
async function readEvents(res: Response, untilMs = 15_000): Promise<{ event: string; id?: string; data: string }[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + untilMs;
  for (;;) {
    const next = await Promise.race([
      reader.read(),
      new Promise<null>((r) => setTimeout(() => r(null), Math.max(0, deadline - Date.now()))),
    ]);
    if (next === null || next.done) break;
    text += decoder.decode(next.value, { stream: true });
  }
  await reader.cancel().catch(() => undefined);
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split('\n');
      const field = (name: string) =>
        lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
      return { event: field('event')[0] ?? 'message', id: field('id')[0], data: field('data').join('\n') };
    });
}

describe('output', () => {
  it('keeps the head and the tail of a long output, with the cut marked', async () => {
    const job = await command(`echo FIRST-LINE; head -c 200000 /dev/zero | tr '\\0' x; echo; echo 'error: the end'`);
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker({ liveOutput: live });
    await eventually(async () => (await get(execution.id))?.status === 'succeeded');
    const output = (await get(execution.id))!.output!;
    expect(output.startsWith('FIRST-LINE\n')).toBe(true);
    expect(output.endsWith('error: the end\n')).toBe(true);
    expect(output).toMatch(/\n\[… \d+ bytes of output dropped …\]\n/);
    const res = await h.call('GET', `/api/v1/executions/${execution.id}/output`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('x-execution-status')).toBe('succeeded');
    expect(res.body).toBe(output);
  });

  it('keeps what a timed-out attempt printed', async () => {
    const job = await command('echo before-the-timeout; sleep 30', { timeoutMs: 800 });
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker();
    await eventually(async () => (await get(execution.id))?.status === 'dead', 15_000);
    const done = (await get(execution.id))!;
    expect(done.error).toMatch(/timed out/);
    expect(done.output).toContain('before-the-timeout');
  });

  it('keeps what a cancelled attempt printed', async () => {
    const job = await command('echo before-the-cancel; sleep 30');
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker({ liveOutput: live });
    // Running, and its first line out (the live buffer has it).
    await eventually(async () =>
      (await h.call('GET', `/api/v1/executions/${execution.id}/output`)).body.includes('before-the-cancel'),
    );
    await cancelExecution(e.deps, execution.id);
    await eventually(async () => (await get(execution.id))?.output?.includes('before-the-cancel'), 10_000);
    expect((await get(execution.id))!.status).toBe('cancelled');
  });

  it('keeps what an attempt printed after its lease was lost (reaped as dead meanwhile)', async () => {
    const job = await command('echo before-the-reaper; sleep 30');
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker({ leaseMs: 1500 });
    await eventually(async () => (await get(execution.id))?.status === 'running');
    await new Promise((r) => setTimeout(r, 300)); // the first line printed
    // What the reaper writes for an attempt whose worker it believes gone.
    await h.env.pool.query(
      `UPDATE executions SET status = 'dead', finished_at = now(), error = 'lease expired', lease_expires_at = NULL WHERE id = $1`,
      [execution.id],
    );
    await eventually(async () => (await get(execution.id))?.output?.includes('before-the-reaper'), 10_000);
    expect((await get(execution.id))!.status).toBe('dead');
  });

  it("reads a running attempt's output so far, and follows it until the attempt ends", async () => {
    const lines = Array.from({ length: 6 }, (_, i) => `line ${i}`);
    const job = await createJob(e.deps, jobSpec({ handler: 'talk', maxRetries: 0 }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker({
      liveOutput: live,
      handlers: {
        talk: async ({ log }) => {
          for (const line of lines) {
            log(line);
            await new Promise((r) => setTimeout(r, 250));
          }
          return 'done';
        },
      },
    });
    const sofar = await eventually(async () => {
      const res = await h.call('GET', `/api/v1/executions/${execution.id}/output`);
      return res.headers.get('x-execution-status') === 'running' && res.body.includes('line 1') ? res.body : null;
    });
    expect(sofar.startsWith('line 0\nline 1\n')).toBe(true);
    const res = await h.app.request(`/api/v1/executions/${execution.id}/output?follow=true`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readEvents(res);
    const outputEvents = events.filter((x) => x.event === 'output');
    const followed = outputEvents.map((x) => x.data).join('\n');
    for (const line of lines) expect(followed).toContain(line);
    expect(events.at(-1)).toEqual({ event: 'end', data: JSON.stringify({ status: 'succeeded' }), id: undefined });
    // A reconnect with Last-Event-ID resumes after that event, and then hears the end.
    const resumed = await readEvents(
      await h.app.request(`/api/v1/executions/${execution.id}/output?follow=true`, {
        headers: { 'Last-Event-ID': outputEvents[1]!.id! },
      }),
    );
    expect(resumed).toEqual([{ event: 'end', data: JSON.stringify({ status: 'succeeded' }), id: undefined }]);
    expect((await get(execution.id))!.output).toBe(`${lines.join('\n')}\ndone`);
  });

  it("shows a running attempt's output on the dashboard's execution page, and follows it there", async () => {
    const job = await createJob(e.deps, jobSpec({ handler: 'talk', maxRetries: 0 }));
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await e.worker({
      liveOutput: live,
      handlers: {
        talk: async ({ log }) => {
          log('first <line>');
          await gate;
          log('second');
        },
      },
    });
    const page = await eventually(async () => {
      const res = await h.call('GET', `/executions/${execution.id}`);
      return res.body.includes('first &lt;line&gt;') ? res.body : null;
    });
    expect(page).toContain(`data-output-stream="/executions/${execution.id}/output?follow=true"`);
    const stream = h.app.request(`/executions/${execution.id}/output?follow=true`);
    setTimeout(release, 300);
    const events = await readEvents(await stream);
    expect(
      events
        .filter((x) => x.event === 'output')
        .map((x) => x.data)
        .join(''),
    ).toBe('first <line>\nsecond\n');
    expect(events.at(-1)!.event).toBe('end');
    // Once it ended, the page shows the whole output in place and no live panel.
    const done = await h.call('GET', `/executions/${execution.id}`);
    expect(done.body).not.toContain('data-output-stream');
    expect(done.body).toContain('second');
  });

  it('costs a job that prints a line and ends within the interval nothing in Redis or the live_output table', async () => {
    const slow = liveOutput({ flushMs: 60_000 });
    try {
      const job = await createJob(e.deps, jobSpec({ handler: 'one-line' }));
      const { execution } = await triggerJob(e.deps, { jobId: job.id });
      await e.worker({ liveOutput: slow, handlers: { 'one-line': ({ log }) => log('hello') } });
      await eventually(async () => (await get(execution.id))?.status === 'succeeded');
      await slow.flush();
      expect(await h.env.redis.exists(queueKeys(h.env.prefix).output(execution.id))).toBe(0);
      expect(
        (await h.env.pool.query('SELECT 1 FROM live_output WHERE execution_id = $1', [execution.id])).rowCount,
      ).toBe(0);
      expect((await get(execution.id))!.output).toBe('hello\n');
    } finally {
      await slow.close();
    }
  });

  it('answers 404 for an unknown execution and 400 for a bad follow', async () => {
    expect((await h.call('GET', '/api/v1/executions/999999/output')).status).toBe(404);
    const job = await command('true');
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    const bad = await h.call('GET', `/api/v1/executions/${execution.id}/output?follow=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
  });
});

describe('live output on the PostgreSQL queue (the live_output table)', () => {
  it('keeps the newest writes per execution, expires old ones, and reads after a cursor', async () => {
    const pg = createPostgresLiveOutput(h.env.pool, { flushMs: 60_000, maxEntries: 3, ttlMs: 3_600_000 });
    const reader = postgresLiveOutputReader(h.env.pool);
    try {
      for (let i = 0; i < 6; i++) {
        pg.append('101', Buffer.from(`a${i}\n`));
        pg.append('102', Buffer.from(`b${i}\n`));
        await pg.flush();
      }
      const a = await reader.read('101', null);
      expect(a.map((x) => x.text)).toEqual(['a3\n', 'a4\n', 'a5\n']);
      expect((await reader.read('102', null)).map((x) => x.text)).toEqual(['b3\n', 'b4\n', 'b5\n']);
      expect((await reader.read('101', a[0]!.id)).map((x) => x.text)).toEqual(['a4\n', 'a5\n']);
      expect(a.every((x) => /^\d+-0$/.test(x.id))).toBe(true);
      // A cursor of another shape, or an id that is not one, reads from the start or nothing.
      expect(await reader.read('101', 'nonsense')).toHaveLength(3);
      expect(await reader.read('not-an-id', null)).toEqual([]);
    } finally {
      await pg.close();
    }
    // Rows older than the TTL go at the next write (the first write of a writer expires).
    await h.env.pool.query(`UPDATE live_output SET written_at = now() - interval '2 hours' WHERE execution_id = 101`);
    const next = createPostgresLiveOutput(h.env.pool, { flushMs: 60_000, ttlMs: 3_600_000 });
    try {
      next.append('103', Buffer.from('c\n'));
      await next.flush();
    } finally {
      await next.close();
    }
    expect(await reader.read('101', null)).toEqual([]);
    expect(await reader.read('102', null)).toHaveLength(3);
  });

  it('shares its buffering with the Redis writer: one write per interval, nothing for an attempt that ended unwritten', async () => {
    const writes: { executionId: string; text: string }[][] = [];
    const buffer = createLiveOutputBuffer(async (w) => void writes.push(w), { flushMs: 60_000, maxFlushBytes: 10 });
    buffer.append('1', Buffer.from('x'.repeat(10)));
    buffer.append('1', Buffer.from('y'.repeat(10)));
    buffer.append('2', Buffer.from('gone'));
    buffer.end('2');
    await buffer.flush();
    expect(writes).toEqual([[{ executionId: '1', text: `[… 10 bytes not streamed …]\n${'y'.repeat(10)}` }]]);
    await buffer.close();
  });
});
