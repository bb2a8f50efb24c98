#!/usr/bin/env node
/**
 * Builds the command supervisor (supervise.c) into packages/runner/bin/jobs-supervise. Run by `npm ci` (postinstall)
 * and `npm run build:supervisor`. Linux only; without a C compiler it warns and the worker later says what that costs
 * (see README, "Trust boundary").
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('./supervise.c', import.meta.url));
const output = fileURLToPath(new URL('../bin/jobs-supervise', import.meta.url));

if (process.platform !== 'linux') {
  console.warn(`jobs-supervise: not built (${process.platform} is not Linux); commands will run unsupervised`);
  process.exit(0);
}
mkdirSync(new URL('../bin/', import.meta.url), { recursive: true });
const cc = process.env.CC || 'cc';
const result = spawnSync(cc, ['-O2', '-Wall', '-Wextra', '-o', output, source], { stdio: 'inherit' });
if (result.error && result.error.code === 'ENOENT') {
  console.warn(`jobs-supervise: not built: no C compiler (${cc}); install one (apt-get install gcc libc6-dev) and run npm run build:supervisor`);
  process.exit(0);
}
if (result.status !== 0) {
  console.error(`jobs-supervise: ${cc} failed (exit ${result.status})`);
  process.exit(1);
}
