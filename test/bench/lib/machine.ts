/** What the figures were measured on: CPU, RAM, Node, PostgreSQL and Redis versions and the settings that matter. */
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import pg from 'pg';
import { Redis } from 'ioredis';
import { DATABASE_URL, REDIS_URL } from '../../support/env';

export interface Machine {
  nproc: number;
  cpu: string;
  ramGb: number;
  node: string;
  postgres: string;
  synchronousCommit: string;
  redis: string;
  redisPersistence: string;
  loadavg: string;
}

export async function machineInfo(): Promise<Machine> {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpu;
  } catch {
    // not Linux
  }
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  const v = await client.query(
    `SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS sc`,
  );
  await client.end();
  const redis = new Redis(REDIS_URL);
  const info = await redis.info('server');
  const aof = (await redis.config('GET', 'appendonly')) as string[];
  const save = (await redis.config('GET', 'save')) as string[];
  redis.disconnect();
  let loadavg = '';
  try {
    loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    // not Linux
  }
  return {
    nproc: cpus().length,
    cpu,
    ramGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    postgres: v.rows[0].v,
    synchronousCommit: v.rows[0].sc,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    redisPersistence: `appendonly=${aof[1]} save="${save[1]}"`,
    loadavg,
  };
}
