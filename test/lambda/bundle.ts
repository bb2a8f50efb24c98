/**
 * Builds the deployable bundles the way they ship: every function (and the container worker) as one ESM file with
 * all workspace packages and dependencies inlined, SQL migrations and Lua scripts included as generated modules.
 * Shared by test/lambda/bundle.test.ts and test/bench/cold-start.ts; `invokeBundle` runs one in a fresh process.
 */
import { build, type Metafile } from 'esbuild';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from '../support/processes';

export const ENTRIES = [
  { name: 'api', entry: 'functions/api.ts' },
  { name: 'tick', entry: 'functions/tick.ts' },
  { name: 'worker', entry: 'functions/worker.ts' },
  { name: 'migrate', entry: 'functions/migrate.ts' },
  { name: 'worker-process', entry: 'functions/worker-process.ts' },
] as const;

/** ESM output has no `require`; bundled CommonJS dependencies (pg, ioredis, pino) need one. */
const REQUIRE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

export interface BuildOptions {
  outdir: string;
  /** Minified, as SST deploys by default. */
  minify?: boolean;
  /** Leave `@aws-sdk/*` to the Lambda runtime's copy instead of bundling it. */
  externalAwsSdk?: boolean;
}

export interface BuiltBundle {
  name: string;
  file: string;
  /** What Lambda's init loads: the entry file and the chunks it imports statically. */
  bytes: number;
  /** The chunks only dynamic imports reach (esbuild's code splitting), loaded when something imports them. */
  chunkBytes: number;
  /** The source files whose code init loads. */
  initInputs: string[];
  gzipBytes: number;
  /** Bytes of the output that came from `@aws-sdk/*` and `@smithy/*`. */
  awsSdkBytes: number;
  warnings: string[];
}

/** Bundles one entry; throws with esbuild's messages when it does not build. */
export async function bundleEntry(entry: { name: string; entry: string }, options: BuildOptions): Promise<BuiltBundle> {
  const file = join(options.outdir, `${entry.name}.mjs`);
  const result = await build({
    entryPoints: { [entry.name]: join(ROOT, entry.entry) },
    outdir: options.outdir,
    outExtension: { '.js': '.mjs' },
    // As the functions deploy (infra/runtime.ts `nodejs.splitting`): what is imported dynamically (the EventBridge
    // SDK, the dashboard, tracing) goes into chunks of its own, loaded only when used. The container image bundles
    // one file (infra/worker.Dockerfile).
    splitting: entry.name !== 'worker-process',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    // ESM builds of dependencies first (the AWS SDK's tree-shake better), as SST does.
    mainFields: ['module', 'main'],
    banner: { js: REQUIRE_BANNER },
    minify: options.minify ?? true,
    external: options.externalAwsSdk ? ['@aws-sdk/*'] : [],
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
  // As the container image does (infra/worker.Dockerfile): the command supervisor ships beside the bundle.
  const supervisor = join(ROOT, 'packages/runner/bin/jobs-supervise');
  const beside = join(options.outdir, 'jobs-supervise');
  // Once per directory: copying over a binary another test is running fails (ETXTBSY).
  if (existsSync(supervisor) && !existsSync(beside)) copyFileSync(supervisor, beside);
  const { loaded, lazy } = initOutputs(result.metafile, entry.name);
  const size = (outputs: string[]) => outputs.reduce((n, o) => n + result.metafile.outputs[o]!.bytes, 0);
  return {
    name: entry.name,
    file,
    bytes: size(loaded),
    chunkBytes: size(lazy),
    initInputs: [...new Set(loaded.flatMap((o) => Object.keys(result.metafile.outputs[o]!.inputs)))],
    // What init loads, compressed.
    gzipBytes: loaded.reduce((n, o) => n + gzipSync(readFileSync(join(ROOT, o))).length, 0),
    awsSdkBytes: sdkBytes(result.metafile),
    warnings: result.warnings.map((w) => `${w.location?.file ?? ''}:${w.location?.line ?? ''} ${w.text}`),
  };
}

/** The outputs the entry loads at import (itself and its static imports, transitively), and the rest. */
function initOutputs(metafile: Metafile, name: string): { loaded: string[]; lazy: string[] } {
  const outputs = Object.keys(metafile.outputs).filter((o) => o.endsWith('.mjs'));
  const entry = outputs.find((o) => o.endsWith(`/${name}.mjs`) && !o.includes('/chunks/'))!;
  const loaded = new Set<string>();
  const visit = (o: string) => {
    if (loaded.has(o)) return;
    loaded.add(o);
    for (const i of metafile.outputs[o]!.imports)
      if (i.kind === 'import-statement' && outputs.includes(i.path)) visit(i.path);
  };
  visit(entry);
  return { loaded: [...loaded], lazy: outputs.filter((o) => !loaded.has(o)) };
}

function sdkBytes(metafile: Metafile): number {
  let bytes = 0;
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, info] of Object.entries(output.inputs)) {
      if (/node_modules\/@(aws-sdk|smithy|aws-crypto)\//.test(input)) bytes += info.bytesInOutput;
    }
  }
  return bytes;
}

/** Builds the child-process harness (test/lambda/invoke.ts) next to the bundles. */
export async function buildInvoker(outdir: string): Promise<string> {
  const file = join(outdir, 'invoke.mjs');
  await build({
    entryPoints: [join(ROOT, 'test/lambda/invoke.ts')],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
  return file;
}

export type Scenario = 'import' | 'api-get' | 'api-post' | 'tick' | 'worker' | 'migrate';

export interface InvokeReport {
  /** From process start until the harness began importing the bundle (node's own start-up). */
  bootMs: number;
  /** Importing the bundle: Lambda's init phase. */
  importMs: number;
  /** The first invocation: connections are opened here. Null for `import`. */
  firstMs: number | null;
  /** A second invocation on the same (now warm) module. */
  warmMs: number | null;
  /** Wall time of the whole child process, measured by the parent. */
  processMs: number;
  exports: string[];
  result: unknown;
}

/** Runs `node invoke.mjs <bundle> <scenario>` in a fresh process with `env`; rejects on a non-zero exit. */
export function invokeBundle(
  invoker: string,
  bundle: string,
  scenario: Scenario,
  env: Record<string, string>,
): Promise<InvokeReport> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [invoker, bundle, scenario], {
      cwd: dirname(bundle),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      const processMs = performance.now() - started;
      const line = stdout.split('\n').find((l) => l.startsWith('{"bootMs"'));
      if (code !== 0 || !line) {
        reject(new Error(`${bundle} (${scenario}) exited ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        return;
      }
      resolve({ ...(JSON.parse(line) as Omit<InvokeReport, 'processMs'>), processMs });
    });
  });
}
