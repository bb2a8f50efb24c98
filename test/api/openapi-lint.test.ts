/** The OpenAPI document passes Redocly's recommended lint (redocly.yaml) with no errors and no warnings. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from '../support/processes';

it('packages/client/openapi.json passes `redocly lint`', async () => {
  const bin = join(ROOT, 'node_modules/.bin/redocly');
  const run = await promisify(execFile)(bin, ['lint', 'packages/client/openapi.json', '--format=summary'], {
    cwd: ROOT,
    timeout: 60_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  }).catch((error: { stdout?: string; stderr?: string; code?: number }) => ({ ...error, failed: true }));
  const text = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  expect('failed' in run, text).toBe(false);
  expect(text).toMatch(/Your API description is valid/);
  // The summary lists one line per rule with problems: `error   no-empty-servers: 1`, `warning tag-description: 4`.
  expect(text, text).not.toMatch(/^(error|warning)\s+[a-z0-9-]+: \d+/m);
}, 90_000);
