/** A real Prometheus server (Debian's `prometheus` package) for tests: a temp config, its own port and storage. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolPresent } from '../support/tools';

const found = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find((p) => existsSync(p)) ?? null;
export const PROMETHEUS = toolPresent('prometheus', found !== null) ? found : null;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface PrometheusServer {
  url: string;
  /** The instant-query result: one value per series, keyed by its labels as JSON. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** GET /api/v1/<path> (e.g. `rules`): its `data`. */
  api(path: string): Promise<any>;
  stop(): Promise<void>;
  log(): string;
}

/** Starts Prometheus scraping `target` (host:port) every 500 ms with `token` as its bearer token. */
export async function startPrometheus(input: {
  target: string;
  token: string;
  path?: string;
  rules?: string;
}): Promise<PrometheusServer> {
  if (!PROMETHEUS) throw new Error('prometheus is not installed (apt-get install -y prometheus)');
  const dir = mkdtempSync(join(tmpdir(), 'prom-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 500ms, scrape_timeout: 400ms, evaluation_interval: 1s }',
      ...(input.rules ? [`rule_files: [${JSON.stringify(input.rules)}]`] : []),
      'scrape_configs:',
      '  - job_name: jobs-scheduler',
      `    metrics_path: ${input.path ?? '/metrics'}`,
      `    authorization: { type: Bearer, credentials: ${JSON.stringify(input.token)} }`,
      `    static_configs: [{ targets: [${JSON.stringify(input.target)}] }]`,
      '',
    ].join('\n'),
  );
  let output = '';
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${output.slice(-2000)}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() - started > 20_000) {
      await stop();
      throw new Error(`prometheus not ready after 20 s: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async api(path) {
      const body = (await (await fetch(`${url}/api/v1/${path}`)).json()) as {
        status: string;
        error?: string;
        data: unknown;
      };
      if (body.status !== 'success') throw new Error(`${path}: ${body.error}`);
      return body.data;
    },
    stop,
    log: () => output,
  };
}
