/**
 * Side effects of command jobs, counted in files every attempt appends to (as nobody, when the suite runs as root):
 * a killed worker must take its attempts' processes with it, so
 * - no attempt writes its `end` line twice (the same attempt, redelivered, ran again while the first still ran);
 * - no attempt held by a killed worker writes `end` after the kill, and nothing a command left behind (`late`) ever
 *   writes at all;
 * - an `overlap: forbid` job never has two runs alive at once;
 * - once everything drained, no process of the scenario's jobs is left on the machine.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '../harness';

/** A killed attempt may still be writing the instant its worker dies; later than this after the kill is a leak. */
const KILL_SLACK_MS = 300;

export interface EffectJobs {
  effectId: string;
  forbidId: string;
  effects: string;
  forbid: string;
}

export async function createEffectJobs(client: ApiClient, dir: string, tag: string): Promise<EffectJobs> {
  const effects = join(dir, 'effects');
  const forbid = join(dir, 'forbid');
  const stamp = (what: string, file: string) => `echo "${what} $JOB_EXECUTION_ID $(date +%s%N)" >> ${file}`;
  const backoff = { base_seconds: 0, max_seconds: 0.2, factor: 2, jitter: 'full' };
  const effect = await client.createJob({
    name: `${tag}-effect`,
    command: `${stamp('start', effects)}; setsid sh -c 'sleep 3; ${stamp('late', effects)}' & sleep 1.2; ${stamp('end', effects)}`,
    max_retries: 5,
    backoff,
    timeout_seconds: 30,
  });
  const once = await client.createJob({
    name: `${tag}-forbid`,
    cron_expr: '* * * * * *',
    overlap: 'forbid',
    command: `${stamp('start', forbid)}; sleep 6; ${stamp('end', forbid)}`,
    max_retries: 0,
    timeout_seconds: 30,
  });
  return { effectId: effect.id, forbidId: once.id, effects, forbid };
}

interface Run {
  id: string;
  start: number | null;
  ends: number[];
  late: number[];
}

function readRuns(file: string): Map<string, Run> {
  const runs = new Map<string, Run>();
  if (!existsSync(file)) return runs;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [what, id, ns] = line.trim().split(' ');
    if (!what || !id || !ns) continue;
    const at = Number(BigInt(ns) / 1_000_000n);
    const run = runs.get(id) ?? { id, start: null, ends: [], late: [] };
    if (what === 'start') run.start = run.start === null ? at : Math.min(run.start, at);
    if (what === 'end') run.ends.push(at);
    if (what === 'late') run.late.push(at);
    runs.set(id, run);
  }
  return runs;
}

/** `killedAt`: for each attempt a killed worker held (running in PostgreSQL at the kill), when the kill came. */
export function checkEffects(jobs: EffectJobs, killedAt: Map<string, number>): { problems: string[]; notes: string[] } {
  const problems: string[] = [];
  const effects = readRuns(jobs.effects);
  const twice = [...effects.values()].filter((r) => r.ends.length > 1);
  if (twice.length > 0)
    problems.push(`${twice.length} attempts completed their side effect twice (e.g. execution ${twice[0]!.id})`);
  const late = [...effects.values()].filter((r) => r.late.length > 0);
  if (late.length > 0)
    problems.push(
      `${late.length} attempts left a process that outlived them and wrote (e.g. execution ${late[0]!.id})`,
    );
  const afterKill = [...effects.values()].filter((r) => {
    const at = killedAt.get(r.id);
    return at !== undefined && r.ends.some((end) => end > at + KILL_SLACK_MS);
  });
  if (afterKill.length > 0) {
    const r = afterKill[0]!;
    problems.push(
      `${afterKill.length} attempts of killed workers completed their side effect after the kill (e.g. execution ${r.id}, ${Math.max(...r.ends) - killedAt.get(r.id)!} ms after)`,
    );
  }
  const killedEffects = [...effects.values()].filter((r) => killedAt.has(r.id)).length;

  // An interval per forbid run: from its start to its end line, or to the kill of its worker when it has none.
  const forbid = [...readRuns(jobs.forbid).values()]
    .filter((r) => r.start !== null)
    .sort((a, b) => a.start! - b.start!);
  let overlaps = 0;
  let example = '';
  for (let i = 0; i + 1 < forbid.length; i++) {
    const run = forbid[i]!;
    const end = run.ends.length > 0 ? Math.max(...run.ends) : killedAt.get(run.id);
    if (end === undefined) continue;
    const next = forbid[i + 1]!;
    if (next.start! < end) {
      overlaps++;
      example ||= `executions ${run.id} and ${next.id} ran at once for ${end - next.start!} ms`;
    }
  }
  if (overlaps > 0) problems.push(`an overlap: forbid job ran twice at once ${overlaps} times (${example})`);
  const killedForbid = forbid.filter((r) => killedAt.has(r.id)).length;
  return {
    problems,
    notes: [
      `side effects: ${effects.size} effect attempts (${killedEffects} killed with their worker), ${forbid.length} forbid runs (${killedForbid} killed), ${overlaps} overlaps`,
    ],
  };
}

/**
 * Processes of this scenario's jobs still alive, as `pid uid command`: their environment names the scenario's queue
 * prefix and an execution (commands get JOB_EXECUTION_ID; the system's own processes, such as the esbuild service
 * tsx starts beside each node process, do not). `own` pids are skipped.
 */
export function leftoverProcesses(prefix: string, own: Set<number>): string[] {
  const marker = Buffer.from(`QUEUE_PREFIX=${prefix}\0`);
  const job = Buffer.from('\0JOB_EXECUTION_ID=');
  const left: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || own.has(Number(entry))) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (!environ.includes(marker) || !environ.includes(job)) continue;
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      left.push(
        `${entry} uid ${uid} ${readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`,
      );
    } catch {
      // gone, or not ours to read
    }
  }
  return left;
}
