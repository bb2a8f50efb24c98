/**
 * Private PostgreSQL and Redis servers for the fault suite. The shared servers on :5432/:6379 are never touched:
 * this module starts its own on free ports, so it can SIGKILL, restart and FLUSHALL them at will.
 *
 * - Redis runs as a foreground child (`redis-server --save "" --appendonly no`): a SIGKILL plus a new start is an
 *   empty Redis on the same port.
 * - PostgreSQL is a cluster of its own: `initdb` into a temp dir as the `postgres` OS user (the suite runs as root),
 *   trust auth, started with `pg_ctl` on a free port with fsync and synchronous_commit on (a crash must not lose a
 *   commit), restarted with `pg_ctl restart -m fast|immediate`.
 *
 * Both are stopped and their directories deleted by `stop()`, which run.ts calls on success, failure and signals.
 * A run that was itself SIGKILLed leaves its directory behind with an `owner.pid` file; the next run stops such
 * leftovers (only ours: the directory prefix and the dead owner pid say so) before it starts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR_PREFIX = 'jobs-faults-';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function pgBinDir(): string {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv) return fromEnv;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql (set PG_BIN)');
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0)
    throw new Error('no PostgreSQL version with initdb under /usr/lib/postgresql (set PG_BIN)');
  return join(base, versions[0]!, 'bin');
}

/** Runs a PostgreSQL tool as the `postgres` OS user when we are root (initdb and postgres refuse to run as root). */
function asPostgres(bin: string, args: string[], options: { timeoutMs?: number } = {}): string {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  return execFileSync(cmd, argv, {
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops servers a killed earlier run left behind (its owner pid is dead), then deletes their directories. */
export function cleanupLeftovers(): string[] {
  const cleaned: string[] = [];
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const ownerFile = join(dir, 'owner.pid');
    if (!existsSync(ownerFile)) continue;
    const owner = Number(readFileSync(ownerFile, 'utf8').trim());
    if (owner && pidAlive(owner)) continue; // another run is using it
    const pgData = join(dir, 'pgdata');
    if (existsSync(join(pgData, 'postmaster.pid'))) {
      try {
        asPostgres(join(pgBinDir(), 'pg_ctl'), ['-D', pgData, '-m', 'immediate', '-w', 'stop'], { timeoutMs: 20_000 });
      } catch {
        // already gone
      }
    }
    const redisPidFile = join(dir, 'redis.pid');
    if (existsSync(redisPidFile)) {
      const pid = Number(readFileSync(redisPidFile, 'utf8').trim());
      // Only a redis-server we started: check the command line before signalling.
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (cmdline.includes('redis-server')) process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
    cleaned.push(dir);
  }
  return cleaned;
}

class PrivateRedis {
  port = 0;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly dir: string) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    writeFileSync(join(this.dir, 'redis.pid'), String(child.pid));
    const deadline = Date.now() + 10_000;
    while (!(await this.ping())) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`redis-server did not start on ${this.port}: ${stderr}`);
      await sleep(50);
    }
  }

  async ping(): Promise<boolean> {
    try {
      return this.cli('PING').trim() === 'PONG';
    } catch {
      return false;
    }
  }

  cli(...args: string[]): string {
    return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...args], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  /** SIGKILL: every key is gone (no persistence); `start()` brings back an empty server on the same port. */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.child.kill('SIGKILL');
    await this.exited;
    this.child = null;
  }

  async restartEmpty(downMs = 0): Promise<void> {
    await this.kill();
    if (downMs > 0) await sleep(downMs);
    await this.start();
  }

  async stop(): Promise<void> {
    await this.kill();
  }
}

class PrivatePostgres {
  port = 0;
  private readonly bin = pgBinDir();
  private readonly data: string;
  private started = false;

  constructor(private readonly dir: string) {
    this.data = join(dir, 'pgdata');
  }

  /** Base URL (database `postgres`); use `urlFor(db)` for a scenario's own database. */
  get url(): string {
    return this.urlFor('postgres');
  }

  urlFor(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async init(): Promise<void> {
    this.port = await freePort();
    mkdirSync(this.data, { recursive: true });
    if (process.getuid?.() === 0) {
      chownSync(this.dir, uidOf('postgres'), gidOf('postgres'));
      chownSync(this.data, uidOf('postgres'), gidOf('postgres'));
    }
    asPostgres(join(this.bin, 'initdb'), [
      '-D',
      this.data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
  }

  private options(): string {
    return [
      `-p ${this.port}`,
      '-k /tmp',
      '-c listen_addresses=127.0.0.1',
      '-c fsync=on',
      '-c synchronous_commit=on',
      '-c max_connections=300',
      '-c shared_buffers=64MB',
    ].join(' ');
  }

  async start(): Promise<void> {
    this.startAgain();
  }

  /** `fast`: clean shutdown (sessions disconnected); `immediate`: a crash (recovery from WAL at the next start). */
  restart(mode: 'fast' | 'immediate'): void {
    asPostgres(join(this.bin, 'pg_ctl'), [
      '-D',
      this.data,
      '-l',
      join(this.dir, 'pg.log'),
      '-w',
      '-t',
      '60',
      '-m',
      mode,
      'restart',
    ]);
  }

  stopServer(mode: 'fast' | 'immediate'): void {
    asPostgres(join(this.bin, 'pg_ctl'), ['-D', this.data, '-w', '-t', '60', '-m', mode, 'stop']);
  }

  /** Starts the cluster again after `stopServer` (same port and options). */
  startAgain(): void {
    asPostgres(join(this.bin, 'pg_ctl'), [
      '-D',
      this.data,
      '-l',
      join(this.dir, 'pg.log'),
      '-w',
      '-t',
      '60',
      '-o',
      this.options(),
      'start',
    ]);
    this.started = true;
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    try {
      this.stopServer('immediate');
    } catch {
      // not running
    }
    this.started = false;
  }
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}
function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}

export interface Servers {
  dir: string;
  pg: PrivatePostgres;
  redis: PrivateRedis;
  stop(options?: { keepDir?: boolean }): Promise<void>;
}

/** Starts a private PostgreSQL cluster and Redis; `stop()` stops both and deletes the directory. */
export async function startServers(): Promise<Servers> {
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  const pg = new PrivatePostgres(dir);
  const redis = new PrivateRedis(dir);
  let stopped = false;
  const stop = async (options: { keepDir?: boolean } = {}) => {
    if (stopped) return;
    stopped = true;
    await redis.stop().catch(() => undefined);
    await pg.stop().catch(() => undefined);
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await pg.init();
    await pg.start();
    await redis.start();
  } catch (error) {
    await stop();
    throw error;
  }
  return { dir, pg, redis, stop };
}
