/**
 * Live output shares the Redis node with the queue, which refuses writes (claims included) once memory is full
 * (noeviction): it is bounded per attempt (the newest LIVE_OUTPUT_MAX_BYTES of text) and in all (at most
 * LIVE_OUTPUT_BUDGET_BYTES, i.e. budget / max attempts streaming at once), and a stream of an ended attempt goes
 * a minute later, not an hour. Against the real local Redis, through the worker's writer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIVE_OUTPUT_DEFAULTS, type LiveOutputBuffer } from '@jobs/core';
import { createLiveOutput, liveOutputReader, queueKeys } from '@jobs/queue';
import { createTestEnv, type TestEnv } from './support/env';

/** Memory the node spends per byte of text it keeps, at most (docs/deploy-aws.md, Redis memory). */
const MEMORY_PER_TEXT_BYTE = 1.35;

let env: TestEnv;
const buffers: LiveOutputBuffer[] = [];
const writer = (options: Parameters<typeof createLiveOutput>[2] = {}) => {
  const live = createLiveOutput(env.redis, queueKeys(env.prefix), { flushMs: 60_000, ...options });
  buffers.push(live);
  return live;
};
const keys = () => queueKeys(env.prefix);
const streamBytes = async (id: string) =>
  (await liveOutputReader(env.redis, keys()).read(id, null)).reduce((n, e) => n + Buffer.byteLength(e.text), 0);

beforeEach(async () => {
  env = await createTestEnv('liveout', { backend: 'redis' });
});
afterEach(async () => {
  for (const b of buffers.splice(0)) await b.close();
  await env.cleanup();
});

/** `bytes` of output through the writer, one full interval (maxFlushBytes) at a time. */
async function print(live: LiveOutputBuffer, id: string, bytes: number, char = 'x') {
  for (let sent = 0; sent < bytes; sent += LIVE_OUTPUT_DEFAULTS.maxFlushBytes) {
    live.append(id, Buffer.from(`${char.repeat(Math.min(LIVE_OUTPUT_DEFAULTS.maxFlushBytes, bytes - sent) - 1)}\n`));
    await live.flush();
  }
}

describe('live output in Redis is bounded', () => {
  it('keeps the newest 256 KiB of a chatty attempt (not 8 MiB), in one stream that readers still follow', async () => {
    const live = writer();
    await print(live, '7001', 2 * 1024 * 1024, 'a');
    await print(live, '7001', 64 * 1024, 'z');
    const bytes = await streamBytes('7001');
    expect(bytes).toBeLessThanOrEqual(LIVE_OUTPUT_DEFAULTS.maxBytes);
    expect(bytes).toBeGreaterThan(LIVE_OUTPUT_DEFAULTS.maxBytes - LIVE_OUTPUT_DEFAULTS.maxFlushBytes);
    const text = (await liveOutputReader(env.redis, keys()).read('7001', null)).map((e) => e.text).join('');
    expect(text.endsWith(`${'z'.repeat(LIVE_OUTPUT_DEFAULTS.maxFlushBytes - 1)}\n`)).toBe(true);
    // What the node spends on it, overhead included (a 16 KiB write takes a 20 KiB allocation), stays near the text.
    const memory = Number(await env.redis.call('MEMORY', 'USAGE', keys().output('7001'), 'SAMPLES', '0'));
    expect(memory).toBeLessThan(MEMORY_PER_TEXT_BYTE * LIVE_OUTPUT_DEFAULTS.maxBytes);
    expect(Number(await env.redis.hget(keys().outputSizes, '7001'))).toBe(bytes);
  });

  it('keeps at most maxEntries writes of an attempt that prints a little at a time', async () => {
    const live = writer({ maxEntries: 20 });
    for (let i = 0; i < 50; i++) {
      live.append('7002', Buffer.from(`line ${i}\n`));
      await live.flush();
    }
    const entries = await liveOutputReader(env.redis, keys()).read('7002', null);
    expect(entries.map((e) => e.text)).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i + 30}\n`));
  });

  it('streams at most budget / max attempts at once; the next streams once one of them has gone', async () => {
    const maxBytes = 64 * 1024;
    const live = writer({ maxBytes, budgetBytes: 3 * maxBytes, endedTtlMs: 300 });
    for (const id of ['7101', '7102', '7103', '7104']) await print(live, id, 200 * 1024);
    const sizes = await Promise.all(['7101', '7102', '7103', '7104'].map(streamBytes));
    expect(sizes.slice(0, 3).every((n) => n > 0 && n <= maxBytes)).toBe(true);
    // The fourth is not streamed (its outcome still has its output); the three hold at most the budget.
    expect(sizes[3]).toBe(0);
    expect(await env.redis.exists(keys().output('7104'))).toBe(0);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3 * maxBytes);

    // The first ends: its stream goes endedTtlMs later, and its place in the budget with it.
    live.end('7101');
    await live.flush();
    expect(await env.redis.pttl(keys().output('7101'))).toBeLessThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 400));
    await print(live, '7104', 32 * 1024);
    expect(await streamBytes('7104')).toBeGreaterThan(0);
    expect(await env.redis.exists(keys().output('7101'))).toBe(0);
    expect(await env.redis.zscore(keys().outputIndex, '7101')).toBeNull();
    expect(await env.redis.hget(keys().outputSizes, '7101')).toBeNull();
  });

  it("lets an ended attempt's stream go a minute after its end, not an hour after its last write", async () => {
    const live = writer();
    live.append('7201', Buffer.from('running\n'));
    await live.flush();
    expect(await env.redis.pttl(keys().output('7201'))).toBeGreaterThan(LIVE_OUTPUT_DEFAULTS.endedTtlMs);
    live.end('7201'); // nothing left to write: the end alone shortens it
    await live.flush();
    const ttl = await env.redis.pttl(keys().output('7201'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(LIVE_OUTPUT_DEFAULTS.endedTtlMs);
    expect((await liveOutputReader(env.redis, keys()).read('7201', null)).map((e) => e.text)).toEqual(['running\n']);
  });

  it('holds no more than the budget when every running attempt prints as much as it can', async () => {
    // 120 attempts (the default AWS stage's most running at once) printing 320 KiB each, budget 4 MiB, 256 KiB each.
    const live = writer({ budgetBytes: 4 * 1024 * 1024 });
    const ids = Array.from({ length: 120 }, (_, i) => String(8000 + i));
    for (let round = 0; round < 20; round++) {
      for (const id of ids) live.append(id, Buffer.from(`${'y'.repeat(LIVE_OUTPUT_DEFAULTS.maxFlushBytes - 1)}\n`));
      await live.flush();
    }
    const sizes = await env.redis.hgetall(keys().outputSizes);
    const total = Object.values(sizes).reduce((a, b) => a + Number(b), 0);
    expect(Object.keys(sizes)).toHaveLength(16);
    expect(total).toBeLessThanOrEqual(4 * 1024 * 1024);
    let memory = 0;
    for (const id of ids)
      memory += Number((await env.redis.call('MEMORY', 'USAGE', keys().output(id), 'SAMPLES', '0')) ?? 0);
    expect(memory).toBeLessThan(MEMORY_PER_TEXT_BYTE * 4 * 1024 * 1024);
  });
});
