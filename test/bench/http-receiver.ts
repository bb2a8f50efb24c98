/**
 * The `http` bench's no-op receiver, a process of its own: answers every request 200 "ok" after reading its body,
 * and records for each its own handling time (first byte of the request seen to the response finished) and the
 * execution id, so the bench can check exactly-once delivery and subtract the receiver's share.
 * `GET /__stats` answers { count, unique, ownP50Us, ownP99Us, cpuS }; prints "listening <port>" when ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const own: number[] = [];
const ids = new Set<string>();
let count = 0;

const server = createServer((req, res) => {
  const started = process.hrtime.bigint();
  if (req.url === '/__stats') {
    const sorted = Float64Array.from(own).sort();
    const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0);
    const cpu = process.cpuUsage();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        count,
        unique: ids.size,
        ownP50Us: at(0.5),
        ownP99Us: at(0.99),
        cpuS: (cpu.user + cpu.system) / 1e6,
      }),
    );
    return;
  }
  req.on('data', () => undefined);
  req.on('end', () => {
    count++;
    const id = req.headers['jobs-execution-id'];
    if (typeof id === 'string') ids.add(id);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok', () => own.push(Number(process.hrtime.bigint() - started) / 1000));
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
