/**
 * Child-process harness, bundled next to the function bundles and run with plain `node`: imports one bundle (a
 * Lambda's init phase), invokes its handler with a fixture event twice (cold, then warm), prints one JSON line of
 * timings and the first result, and exits (a Lambda container would freeze with its connections open instead).
 * Usage: node invoke.mjs <bundle.mjs> <import|api-get|api-post|tick|worker|migrate>
 */
import { pathToFileURL } from 'node:url';
import { httpApiGetJobs, httpApiPostJob, lambdaContext, scheduledEvent, workAvailableEvent } from '../fixtures/events';

const bootMs = performance.now();
const [bundle, scenario = 'import'] = process.argv.slice(2);
const scenarios: Record<string, { event: () => unknown; timeoutMs: number }> = {
  'api-get': { event: () => httpApiGetJobs(), timeoutMs: 30_000 },
  'api-post': {
    event: () => httpApiPostJob({ body: { name: `bundle-${process.pid}-${Date.now()}`, command: 'true' } }),
    timeoutMs: 30_000,
  },
  tick: { event: () => scheduledEvent(), timeoutMs: 60_000 },
  worker: { event: () => workAvailableEvent(), timeoutMs: 900_000 },
  migrate: { event: () => ({ source: 'deploy' }), timeoutMs: 300_000 },
};

const t0 = performance.now();
const mod = await import(pathToFileURL(bundle!).href);
const importMs = performance.now() - t0;
let firstMs: number | null = null;
let warmMs: number | null = null;
let result: unknown = null;
const run = scenarios[scenario];
if (run) {
  const t1 = performance.now();
  result = await mod.handler(run.event(), lambdaContext({ timeoutMs: run.timeoutMs }));
  firstMs = performance.now() - t1;
  if (scenario !== 'migrate' && scenario !== 'worker') {
    const t2 = performance.now();
    await mod.handler(run.event(), lambdaContext({ timeoutMs: run.timeoutMs }));
    warmMs = performance.now() - t2;
  }
} else if (scenario !== 'import') {
  throw new Error(`unknown scenario ${scenario}`);
}
process.stdout.write(`${JSON.stringify({ bootMs, importMs, firstMs, warmMs, exports: Object.keys(mod), result })}\n`);
process.exit(0);
