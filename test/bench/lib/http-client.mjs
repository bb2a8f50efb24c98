// Load generator for the HTTP enqueue benchmark, run in a worker thread (its own event loop, so the in-process
// server under test is not also paying for the client). node:http with a keep-alive agent (one socket per loop;
// much lighter than fetch, so the client takes less of the shared machine), `concurrency` loops sending POST
// requests until `n` were sent. Posts back { ms, statuses, ids, latencies }.
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, n, concurrency, token } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url);
const body = '{}';
const headers = {
  'content-type': 'application/json',
  'content-length': Buffer.byteLength(body),
  authorization: `Bearer ${token}`,
};

function post() {
  return new Promise((resolve) => {
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers, agent },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
        res.on('error', (error) => resolve({ status: String(error.code ?? error) }));
      },
    );
    req.on('error', (error) => resolve({ status: String(error.code ?? error) }));
    req.end(body);
  });
}

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
      const res = await post();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 201) {
        try {
          const id = JSON.parse(res.text).id;
          if (id) ids.push(String(id));
        } catch {
          // counted by status
        }
      }
      latencies.push(performance.now() - t);
    }
  }),
);
agent.destroy();
parentPort.postMessage({ ms: performance.now() - started, statuses, ids, latencies });
