/** A command job's own variables through the API: validated, shown, versioned and diffed like other fields. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await apiHarness();
});
afterAll(async () => {
  await h.cleanup();
});

const create = (body: Record<string, unknown>) =>
  h.call('POST', '/api/v1/jobs', { body: { name: `env-${Math.random().toString(36).slice(2)}`, ...body } });

describe('a job with env', () => {
  it('is created, shown, and an edit of env is a new version with the old and new variables', async () => {
    const job = await h.createJob({ env: { REPORT_BUCKET: 'reports', LOG_LEVEL: 'info' } });
    expect(job.env).toEqual({ REPORT_BUCKET: 'reports', LOG_LEVEL: 'info' });
    const res = await h.call('PATCH', `/api/v1/jobs/${job.id}`, { body: { env: { REPORT_BUCKET: 'archive' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 2, env: { REPORT_BUCKET: 'archive' } });
    const versions = await h.call('GET', `/api/v1/jobs/${job.id}/versions`);
    expect(versions.body.data[0].changes).toEqual([
      { field: 'env', old: { REPORT_BUCKET: 'reports', LOG_LEVEL: 'info' }, new: { REPORT_BUCKET: 'archive' } },
    ]);
    const cleared = await h.call('PATCH', `/api/v1/jobs/${job.id}`, { body: { env: null } });
    expect(cleared.body).toMatchObject({ version: 3, env: null });
    const same = await h.call('PATCH', `/api/v1/jobs/${job.id}`, { body: { env: {} } });
    expect(same.body.version).toBe(3);
  });

  it('refuses bad names, reserved names, oversized values and env on a job that is not a command', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ env: { lower: 'x' } }, 'env.lower', /upper-case letters/],
      [{ env: { '1X': 'x' } }, 'env.1X', /upper-case letters/],
      [{ env: { JOB_ID: 'x' } }, 'env.JOB_ID', /JOB_\* variables are set by the scheduler/],
      [{ env: { TRACEPARENT: 'x' } }, 'env.TRACEPARENT', /set by the scheduler/],
      [{ env: { DATABASE_URL: 'x' } }, 'env.DATABASE_URL', /scheduler's own configuration/],
      [{ env: { BIG: 'x'.repeat(32 * 1024 + 1) } }, 'env.BIG', /32768/],
      [{ env: { A: 1 } }, 'env.A', /./],
      [{ env: { A: { secret: 'Bad Name' } } }, 'env.A', /./],
      [{ env: { A: { secret: 'tok', format: 'Bearer' } } }, 'env.A', /./],
      [{ command: null, handler: 'noop', env: { A: 'x' } }, 'env', /a handler job has none/],
    ];
    for (const [fields, path, message] of cases) {
      const res = await create({ command: 'true', ...fields });
      expect(res.status, JSON.stringify(fields).slice(0, 80)).toBe(400);
      const detail = res.body.error.details.find((d: { path: string }) => d.path.startsWith(path));
      expect(detail, `${path}: ${JSON.stringify(res.body.error.details)}`).toBeDefined();
      expect(detail.message).toMatch(message);
    }
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`V${i}`, 'x']));
    const tooMany = await create({ command: 'true', env: many });
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toContain('at most 100 variables');
  });
});

describe('jobs as code with env', () => {
  it('plans and applies a change of env by name (what `jobs apply` sends)', async () => {
    const name = `env-apply-${Math.random().toString(36).slice(2)}`;
    const first = await h.call('PUT', `/api/v1/jobs/by-name/${name}`, { body: { command: 'true', env: { A: '1' } } });
    expect(first.status).toBe(201);
    const plan = await h.call('POST', `/api/v1/jobs/by-name/${name}/plan`, {
      body: { command: 'true', env: { A: '2' } },
    });
    expect(JSON.stringify(plan.body)).toContain('"field":"env"');
    const second = await h.call('PUT', `/api/v1/jobs/by-name/${name}`, { body: { command: 'true', env: { A: '2' } } });
    expect(second.body).toMatchObject({ version: 2, env: { A: '2' } });
  });
});
