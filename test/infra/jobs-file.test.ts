/** infra/jobs.ts: the SST app's jobs.json becomes one deploy-time invocation of the API function, after migrations. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluateSstConfig, resolve, uninstallSstGlobals } from './sst-globals';

const dir = mkdtempSync(join(tmpdir(), 'jobs-file-'));
const saved = process.env.JOBS_FILE;
afterEach(() => {
  uninstallSstGlobals();
  if (saved === undefined) delete process.env.JOBS_FILE;
  else process.env.JOBS_FILE = saved;
});

function useFile(text: string | null): void {
  const path = join(dir, `jobs-${Math.random().toString(36).slice(2)}.json`);
  if (text !== null) writeFileSync(path, text);
  process.env.JOBS_FILE = path;
}

describe('jobs.json on deploy', () => {
  it('invokes the API function with the specs, after the migrations', async () => {
    const specs = [{ name: 'nightly', cron_expr: '0 3 * * *', handler: 'noop' }];
    useFile(JSON.stringify({ jobs: specs }));
    const { graph } = await evaluateSstConfig({ stage: 'production', dev: false });
    const invocation = graph.one('aws.lambda.Invocation', 'ApplyJobsOnDeploy');
    const api = graph.one('sst.aws.Function', 'ApiHandler');
    expect(resolve(invocation.args.functionName)).toBe(resolve((api.instance as { name: unknown }).name));
    expect(JSON.parse(invocation.args.input)).toEqual({ source: 'deploy', jobs: specs });
    expect(invocation.args.triggers.deployedAt).toEqual(expect.any(String));
    expect((invocation.opts as { dependsOn: unknown[] }).dependsOn).toEqual([
      graph.one('aws.lambda.Invocation', 'MigrateOnDeploy').instance,
    ]);
  });

  it('does nothing without a file, or under sst dev', async () => {
    useFile(null);
    const deployed = await evaluateSstConfig({ stage: 'dev', dev: false });
    expect(deployed.graph.all('aws.lambda.Invocation').map((r) => r.name)).toEqual(['MigrateOnDeploy']);
    uninstallSstGlobals();
    useFile('[]');
    const dev = await evaluateSstConfig({ stage: 'dev', dev: true });
    expect(dev.graph.all('aws.lambda.Invocation')).toEqual([]);
  });

  it('fails the deploy on a file that is not JSON or not a list', async () => {
    useFile('{"jobs": [');
    await expect(evaluateSstConfig({ stage: 'dev', dev: false })).rejects.toThrow(/not valid JSON/);
    uninstallSstGlobals();
    useFile('{"name": "x"}');
    await expect(evaluateSstConfig({ stage: 'dev', dev: false })).rejects.toThrow(/expected a list/);
  });
});
