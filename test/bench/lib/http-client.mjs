// Load generator for the HTTP enqueue benchmark, run in a worker thread (its own event loop, so the in-process
// server under test is not also paying for the client). Plain fetch (undici, keep-alive), `concurrency` loops
// sending POST requests until `n` were sent. Posts back { ms, statuses, ids, latencies }.
import { parentPort, workerData } from 'node:worker_threads';

const { url, n, concurrency, token } = workerData;
let sent = 0;
const statuses = {};
const ids = [];
const latencies = [];
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (sent < n) {
      sent++;
      const t = performance.now();
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: '{}',
        });
        const body = await res.json().catch(() => null);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 201 && body && body.id) ids.push(String(body.id));
      } catch (error) {
        statuses[String(error?.cause?.code ?? error)] = (statuses[String(error?.cause?.code ?? error)] ?? 0) + 1;
      }
      latencies.push(performance.now() - t);
    }
  }),
);
parentPort.postMessage({ ms: performance.now() - started, statuses, ids, latencies });
