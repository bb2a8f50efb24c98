/** Job secrets: sealed at rest, resolved by the worker at the attempt, masked in output, rotated under a new key. */
import { createJob, triggerJob } from '@jobs/core';
import { secretPut, secretsRotate, secretValues, type Keyring } from '@jobs/store';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engine } from './support/engine';
import { createTestEnv, eventually, type TestEnv } from './support/env';
import { jobSpec } from './support/fixtures';

let env: TestEnv;
let e: ReturnType<typeof engine>;
const keyring: Keyring = { current: randomBytes(32), previous: [] };

beforeEach(async () => {
  env = await createTestEnv('secrets');
  e = engine(env);
});
afterEach(async () => {
  await e.stopAll();
  await env.cleanup();
});

const source = () => ({ values: (names: readonly string[]) => secretValues(env.pool, keyring, names) });

async function finished(executionId: string) {
  return eventually(async () => {
    const row = await env.store.executionGet(executionId);
    return row && ['succeeded', 'failed', 'dead'].includes(row.status) ? row : null;
  });
}

describe('a job with a secret', () => {
  it("sees its own secret and not another job's, and a value it prints is masked in its stored output", async () => {
    await secretPut(env.pool, keyring, { name: 'alpha', value: 'canary-alpha-51f2', actor: 'test' });
    await secretPut(env.pool, keyring, { name: 'bravo', value: 'canary-bravo-93c7', actor: 'test' });
    const job = await createJob(
      e.deps,
      jobSpec({
        handler: null,
        // The expected value is spelled in two halves, so the job's own row never holds it.
        command: '[ "$TOKEN" = "$(printf %s%s cana ry-alpha-51f2)" ] && echo has-own; echo "printed $TOKEN"; env',
        env: { TOKEN: { secret: 'alpha' } },
      }),
    );
    const { execution } = await triggerJob(e.deps, { jobId: job.id });
    await e.worker({ runner: { secrets: source() } });
    const done = await finished(execution.id);
    expect(done.status).toBe('succeeded');
    expect(done.output).toContain('has-own');
    expect(done.output).toContain('printed ********');
    expect(done.output).not.toContain('canary-alpha');
    expect(done.output).not.toContain('canary-bravo');
    // Nothing in the database holds a value in clear: the job, the execution, the secrets rows.
    const dump = await env.pool.query(
      `SELECT (SELECT json_agg(j) FROM jobs j)::text || (SELECT json_agg(x) FROM executions x)::text ||
              (SELECT json_agg(s) FROM secrets s)::text || coalesce((SELECT json_agg(v) FROM job_versions v)::text, '') AS text`,
    );
    expect(dump.rows[0].text).not.toContain('canary-');
    expect(JSON.stringify(e.transitions)).not.toContain('canary-');
  });

  it('fails with a clear error when its secret is missing, and is retried', async () => {
    const job = await createJob(
      e.deps,
      jobSpec({
        handler: null,
        command: 'echo should-not-run',
        env: { TOKEN: { secret: 'never-created' } },
        maxRetries: 1,
        backoff: { baseMs: 50, factor: 1, maxMs: 50, jitter: 'none' },
      }),
    );
    await triggerJob(e.deps, { jobId: job.id });
    await e.worker({ runner: { secrets: source() } });
    const chain = await eventually(async () => {
      const list = await env.store.executionList({ jobId: job.id, limit: 10 });
      return list.length === 2 && list.every((x) => ['failed', 'dead'].includes(x.status)) ? list : null;
    });
    for (const attempt of chain) {
      expect(attempt.error).toMatch(/secret "never-created" does not exist/);
      expect(attempt.outputTail ?? '').not.toContain('should-not-run');
    }
  });
});

describe('rotating SECRETS_KEY', () => {
  it('keeps every secret readable and changes every ciphertext', async () => {
    const old: Keyring = { current: randomBytes(32), previous: [] };
    for (const name of ['one', 'two', 'three'])
      await secretPut(env.pool, old, { name, value: `value-of-${name}`, actor: 'test' });
    const before = await env.pool.query(`SELECT name, value_sealed, key_sealed FROM secrets ORDER BY name`);
    const rotated: Keyring = { current: randomBytes(32), previous: [old.current] };
    expect(await secretsRotate(env.pool, rotated)).toBe(3);
    expect(await secretsRotate(env.pool, rotated)).toBe(0);
    const after = await env.pool.query(`SELECT name, value_sealed, key_sealed FROM secrets ORDER BY name`);
    after.rows.forEach((row, i) => {
      expect(row.value_sealed.equals(before.rows[i].value_sealed)).toBe(false);
      expect(row.key_sealed.equals(before.rows[i].key_sealed)).toBe(false);
    });
    // Readable under the new key alone: nothing is left sealed under the old one.
    const values = await secretValues(env.pool, { current: rotated.current, previous: [] }, ['one', 'two', 'three']);
    expect(Object.fromEntries(values)).toEqual({ one: 'value-of-one', two: 'value-of-two', three: 'value-of-three' });
  });
});
