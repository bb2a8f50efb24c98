/** Inputs are refused, not mangled: every case answers 400 with what is wrong, and nothing is stored. */
import { afterEach, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from './harness';

let h: Harness;
afterEach(async () => {
  await h.cleanup();
});

const name = () => `job-${Math.random().toString(36).slice(2)}`;
const jobCount = async () => Number((await h.env.pool.query('SELECT count(*) FROM jobs')).rows[0].count);

describe('names', () => {
  it('are NFC-normalised: a decomposed spelling is the same name', async () => {
    h = await apiHarness();
    const composed = await h.createJob({ name: 'caf\u00e9' });
    expect(composed.name).toBe('caf\u00e9');
    const decomposed = await h.call('POST', '/api/v1/jobs', { body: { name: 'cafe\u0301', handler: 'noop' } });
    expect(decomposed.status).toBe(409);
  });

  it('refuse bidi controls, zero-width and other format characters', async () => {
    h = await apiHarness();
    for (const bad of [
      'invoice\u202Egpj.exe',
      'a\u200Bb',
      'a\u200Db',
      '\uFEFFname',
      'a\u2066b\u2069',
      'a\u00ADb',
      'line\u2028break',
      'a\u061Cb',
    ]) {
      const res = await h.call('POST', '/api/v1/jobs', { body: { name: bad, handler: 'noop' } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.details).toEqual([
        { path: 'name', message: expect.stringMatching(/invisible formatting characters/) },
      ]);
    }
    expect(await jobCount()).toBe(0);
  });
});

describe('bodies and payloads', () => {
  it('refuses a body that is not valid UTF-8 instead of storing U+FFFD', async () => {
    h = await apiHarness();
    const prefix = Buffer.from(`{"name":"${name()}","handler":"noop","payload":"`);
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const raw = new Uint8Array(Buffer.concat([prefix, Buffer.from(bad), Buffer.from('"}')]));
      const res = await h.call('POST', '/api/v1/jobs', { raw, headers: { 'Content-Type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_utf8');
    }
    const job = await h.createJob();
    const trigger = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, {
      raw: new Uint8Array([...Buffer.from('{"payload":"'), 0xfe, ...Buffer.from('"}')]),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(trigger.status).toBe(400);
    expect(await jobCount()).toBe(1);
    // Valid multi-byte text is read back byte for byte.
    const ok = await h.call('POST', '/api/v1/jobs', {
      raw: new Uint8Array(
        Buffer.from(JSON.stringify({ name: name(), handler: 'noop', payload: { s: 'z\u00fcrich \u{1F600}' } })),
      ),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.payload).toEqual({ s: 'z\u00fcrich \u{1F600}' });
  });

  it('refuses payload numbers JSON cannot carry exactly, in jobs and triggers', async () => {
    h = await apiHarness();
    const job = await h.createJob();
    for (const literal of ['1e400', '-1e400', '9007199254740993', '-9007199254740992', '1e300']) {
      const raw = `{"name":"${name()}","handler":"noop","payload":{"n":[${literal}]}}`;
      const create = await h.call('POST', '/api/v1/jobs', { raw, headers: { 'Content-Type': 'application/json' } });
      expect(create.status, literal).toBe(400);
      expect(create.body.error.details[0]).toMatchObject({
        path: 'payload',
        message: expect.stringMatching(/cannot carry exactly/),
      });
      const trigger = await h.call('POST', `/api/v1/jobs/${job.id}/trigger`, {
        raw: `{"payload":${literal}}`,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(trigger.status, literal).toBe(400);
    }
    const exact = await h.createJob({ payload: { max: 9007199254740991, min: -9007199254740991, f: 0.1, e: 1e-300 } });
    expect(exact.payload).toEqual({ max: 9007199254740991, min: -9007199254740991, f: 0.1, e: 1e-300 });
  });
});

describe('run_at', () => {
  it('refuses a run time in the past unless allow_past says so', async () => {
    h = await apiHarness();
    const past = new Date(Date.now() - 60_000).toISOString();
    const refused = await h.call('POST', '/api/v1/jobs', { body: { name: name(), handler: 'noop', run_at: past } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      { path: 'run_at', message: expect.stringMatching(/is in the past .*allow_past/) },
    ]);
    const allowed = await h.createJob({ run_at: past, allow_past: true });
    expect(allowed.run_at).toBe(past);
    expect(allowed).not.toHaveProperty('allow_past');
    // A client's "now" arrives a moment late: a few seconds back still counts.
    await h.createJob({ run_at: new Date(Date.now() - 1000).toISOString() });
    await h.createJob({ run_at: new Date(Date.now() + 60_000).toISOString() });
  });

  it('refuses a run time before 1970, even with allow_past', async () => {
    h = await apiHarness();
    const early = await h.call('POST', '/api/v1/jobs', {
      body: { name: name(), handler: 'noop', run_at: '1900-01-01T00:00:00Z', allow_past: true },
    });
    expect(early.status).toBe(400);
    expect(early.body.error.details).toEqual([
      {
        path: 'run_at',
        message:
          'is 1900-01-01T00:00:00.000Z; instants from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z are supported',
      },
    ]);
    const epoch = await h.createJob({ run_at: '1970-01-01T00:00:00Z', allow_past: true });
    expect(epoch.run_at).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('COMMAND_JOBS=off', () => {
  it('refuses command jobs at create with a 400 naming the switch; handler jobs still work', async () => {
    h = await apiHarness({ commandJobs: false });
    const res = await h.call('POST', '/api/v1/jobs', { body: { name: name(), command: 'id' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'command', message: expect.stringMatching(/COMMAND_JOBS=off/) }]);
    expect(await jobCount()).toBe(0);
    await h.createJob({ command: undefined, handler: 'noop' });
  });
});

describe('long ids and paths', () => {
  it('are cut to 200 characters in error messages and log lines', async () => {
    h = await apiHarness();
    const long = '9'.repeat(5000);
    const job = await h.call('GET', `/api/v1/jobs/${long}`);
    expect(job.status).toBe(404);
    expect(job.body.error.message.length).toBeLessThan(300);
    expect(job.body.error.message).toContain('…(+4800)');
    const route = await h.call('GET', `/api/v1/${'x'.repeat(5000)}`);
    expect(route.status).toBe(404);
    expect(route.body.error.message.length).toBeLessThan(300);
    const lines = h.rec.logs.map((l) => JSON.stringify(l.obj));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.length).toBeLessThan(600);
  });
});
