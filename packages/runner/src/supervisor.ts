/**
 * @module supervisor — finds the command supervisor (native/supervise.c, built by `npm ci`) and checks a job user.
 * The supervisor is what ties every process a command starts to its attempt and to its worker's life; see
 * supervise.c for how, and the README's trust boundary for what holds without it.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** How commands are run: under the supervisor at `path`, as `user` (null: the worker's own user). */
export interface Supervision {
  path: string;
  user: string | null;
}

/**
 * The supervisor binary: beside the package's sources (`packages/runner/bin/`), or beside a bundle (the container
 * image puts it next to worker.mjs). Null when it was not built (no C compiler, not Linux).
 */
export function findSupervisor(): string | null {
  const candidates = [new URL('../bin/jobs-supervise', import.meta.url), new URL('./jobs-supervise', import.meta.url)];
  for (const candidate of candidates) {
    if (candidate.protocol !== 'file:') continue;
    const path = fileURLToPath(candidate);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  return null;
}

/** The uid and gid of `user` as the supervisor will see it (null: no such user). */
export function lookupUser(supervisor: string, user: string): { uid: number; gid: number } | null {
  const result = spawnSync(supervisor, ['--check-user', user], { encoding: 'utf8', timeout: 5000 });
  if (result.status !== 0) return null;
  const [uid, gid] = result.stdout.trim().split(' ').map(Number);
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid: uid!, gid: gid! } : null;
}
