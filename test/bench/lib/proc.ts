/**
 * Child processes and /proc sampling for the benchmarks. Children are the real entry points run with
 * `node --import tsx` (one OS process each, so the pid we sample is the process doing the work).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Collector } from './result';
import { sleep } from './stats';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export interface Spawned {
  pid: number;
  child: ChildProcess;
  /** stderr (and stdout when piped), last 64 KiB. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnNode(
  script: string,
  env: Record<string, string>,
  options: { stdout?: 'ignore' | 'pipe'; nodeArgs?: string[] } = {},
): Spawned {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', `${ROOT}${script}`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...env },
    // stdout 'ignore' is /dev/null: the child still formats and writes every log line, nobody reads it.
    stdio: ['ignore', options.stdout ?? 'ignore', 'pipe'],
  });
  children.add(child);
  let text = '';
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    if (text.length > 65536) text = text.slice(-65536);
  };
  child.stdout?.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    pid: child.pid!,
    child,
    output: () => text,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Fields of /proc/<pid>/status in kB (VmRSS, VmHWM, ...), or null once the process is gone. */
function procStatusKb(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** User + system CPU seconds of one process so far. */
export function procCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/** CPU seconds per process name (postgres, redis-server, node...) over every process on the machine. */
function cpuByCommand(): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
      out.set(comm, (out.get(comm) ?? 0) + cpu);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Whole-machine busy/total jiffies, for "how busy was the box during this run". */
function machineCpu(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/**
 * Samples a process's RSS every `everyMs`; `end()` also reads VmHWM (the kernel's own peak) and the CPU seconds it
 * used, and what postgres and redis-server used meanwhile (all of them on the machine: noisy when others run).
 */
export function sampler(pid: number, everyMs = 100) {
  let peakRssKb = 0;
  let cpu0 = procCpuSeconds(pid) ?? 0;
  let byCmd0 = cpuByCommand();
  let m0 = machineCpu();
  let t0 = performance.now();
  let ended: ReturnType<typeof finish> | null = null;
  const poll = () => {
    const rss = procStatusKb(pid, 'VmRSS');
    if (rss !== null && rss > peakRssKb) peakRssKb = rss;
  };
  const timer = setInterval(poll, everyMs);
  function finish() {
    clearInterval(timer);
    poll();
    const hwmKb = procStatusKb(pid, 'VmHWM');
    const wallS = (performance.now() - t0) / 1000;
    const byCmd1 = cpuByCommand();
    const m1 = machineCpu();
    const delta = (name: string) => Math.max(0, (byCmd1.get(name) ?? 0) - (byCmd0.get(name) ?? 0));
    return {
      wallS,
      peakRssMb: peakRssKb / 1024,
      hwmMb: hwmKb === null ? Number.NaN : hwmKb / 1024,
      processCpuS: (procCpuSeconds(pid) ?? cpu0) - cpu0,
      postgresCpuS: delta('postgres'),
      redisCpuS: delta('redis-server'),
      machineBusyPct: ((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)) * 100,
    };
  }
  return {
    /** Restarts the CPU accounting (e.g. once the process finished loading); RSS peaks keep counting. */
    rebase() {
      cpu0 = procCpuSeconds(pid) ?? 0;
      byCmd0 = cpuByCommand();
      m0 = machineCpu();
      t0 = performance.now();
    },
    /** Stops sampling; the first call's figures are kept (later calls return them again). */
    end() {
      ended ??= finish();
      return ended;
    },
  };
}

/**
 * The peer's drain as both BullMQ runs watch it: wait for the worker's `ready` line (at most 30 s), call `started`,
 * then poll `done()` until it reaches `n`; no progress for 60 s or a dead worker is a failed check.
 */
export async function waitPeerDrain(
  c: Collector,
  worker: ReturnType<typeof spawnNode>,
  o: { n: number; label: string; started: () => void; done: () => Promise<number> },
): Promise<void> {
  const readyBy = Date.now() + 30_000;
  while (!worker.output().includes('ready\n') && Date.now() < readyBy && worker.child.exitCode === null)
    await sleep(10);
  o.started();
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const done = await o.done();
    if (done >= o.n) return;
    if (done !== last) {
      last = done;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > 60_000 || worker.child.exitCode !== null) {
      c.check(
        'drain finished',
        false,
        `no progress for 60 s or the worker died:\n${worker.output().slice(-2000)}`,
        o.label,
      );
      return;
    }
    await sleep(100);
  }
}
