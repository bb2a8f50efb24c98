/**
 * A clean install on the supported Node version (package.json `engines`, the README's Node 20) prints no engine
 * warning: `npm ci --dry-run` on a copy of the manifests and the lockfile resolves exactly what `npm ci` installs and
 * checks every package's `engines` the same way, without touching node_modules (about a second, no download).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/processes';

const dir = mkdtempSync(join(tmpdir(), 'jobs-npm-ci-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm ci', () => {
  it('warns of no unsupported engine (EBADENGINE) on this Node', async () => {
    const manifests = [
      'package.json',
      'package-lock.json',
      ...readdirSync(join(ROOT, 'packages')).map((p) => `packages/${p}/package.json`),
    ];
    for (const file of manifests) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      cpSync(join(ROOT, file), join(dir, file));
    }
    const { stdout, stderr } = await promisify(execFile)(
      'npm',
      ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: dir, timeout: 120_000, env: { ...process.env, npm_config_loglevel: 'warn' } },
    );
    expect(stdout).toMatch(/added \d+ packages/);
    expect(`${stdout}\n${stderr}`).not.toContain('EBADENGINE');
  }, 150_000);
});
