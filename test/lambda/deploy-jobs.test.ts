/** functions/api.ts invoked by the deploy with jobs.json (infra/jobs.ts): create, replace, prune its own, fail loudly. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../fixtures/events';
import { lambdaTestEnv, type LambdaTestEnv } from './harness';

let env: LambdaTestEnv;
let api: typeof import('../../functions/api');

const deploy = (jobs: unknown[]) =>
  api.handler({ source: 'deploy', jobs }, lambdaContext({ functionName: 'ApiHandler', timeoutMs: 30_000 }));

beforeAll(async () => {
  env = await lambdaTestEnv('ldeploy', { API_KEYS: 'deploy-jobs-key-0123' });
  api = await import('../../functions/api');
});
afterAll(async () => {
  await api.closeApi();
  await env.cleanup();
});

describe('the deploy applies jobs.json through the API function', () => {
  it('creates, leaves unchanged, replaces, and prunes only the jobs a deploy created', async () => {
    const byHand = await env.job({ name: 'made-by-hand' });
    const first = await deploy([
      { name: 'nightly', cron_expr: '0 3 * * *', timezone: 'Europe/Paris', handler: 'noop' },
      { name: 'cleanup', cron_expr: '*/15 * * * *', handler: 'noop' },
    ]);
    expect(first.results).toEqual([
      { name: 'nightly', action: 'created' },
      { name: 'cleanup', action: 'created' },
    ]);
    const nightly = await env.store.jobGetByName('nightly');
    expect(nightly).toMatchObject({ managedBy: 'sst-deploy', version: 1, cronExpr: '0 3 * * *' });
    expect((await env.store.jobVersions(nightly!.id))![0]!.actor).toBe('deploy');
    expect(await env.store.auditList({ target: `job:${nightly!.id}`, limit: 10 })).toMatchObject([
      { keyName: 'deploy', action: 'job.create', outcome: 'ok' },
    ]);
    const second = await deploy([
      { name: 'nightly', cron_expr: '0 4 * * *', timezone: 'Europe/Paris', handler: 'noop' },
    ]);
    expect(second.results).toEqual([
      { name: 'nightly', action: 'updated' },
      { name: 'cleanup', action: 'deleted' },
    ]);
    expect(await env.store.jobGetByName('cleanup')).toBeNull();
    expect(await env.store.jobGet(byHand.id)).not.toBeNull();
    const third = await deploy([
      { name: 'nightly', cron_expr: '0 4 * * *', timezone: 'Europe/Paris', handler: 'noop' },
    ]);
    expect(third.results).toEqual([{ name: 'nightly', action: 'unchanged' }]);
  });

  it('throws (failing the deploy) naming each invalid spec, and prunes nothing then', async () => {
    await deploy([{ name: 'kept', handler: 'noop' }]);
    await expect(
      deploy([{ name: 'broken', cron_expr: '0 0 30 2 *', handler: 'noop' }, { handler: 'noop' }]),
    ).rejects.toThrow(/broken: .*never fires.*#2: name: is required/);
    expect(await env.store.jobGetByName('kept')).not.toBeNull();
  });
});
