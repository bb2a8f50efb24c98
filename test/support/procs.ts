/** Looking at the machine's processes from a test: which are still alive, by a marker in their command line. */
import { chmodSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** Pids of live (not zombie) processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!cmdline.includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** A fractional sleep no other process on the machine runs, so `processesWith` finds only ours. */
export function uniqueSleep(seconds: number): string {
  return `${seconds}.${String(randomBytes(3).readUIntBE(0, 3)).padStart(8, '0')}`;
}

/** A directory any user can write into (commands of a root worker run as `nobody`). */
export function sharedDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`));
  chmodSync(dir, 0o1777);
  return dir;
}

export const isRoot = process.getuid?.() === 0;
