/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per function (name + file:line) and per file
 * or package, as shares of all samples. `node --import tsx test/bench/lib/cpuprofile.ts FILE [top]` prints it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface ProfileSummary {
  totalMs: number;
  functions: { name: string; where: string; selfPct: number; selfMs: number }[];
  groups: { group: string; selfPct: number; selfMs: number }[];
}

export function summariseProfile(path: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
    startTime: number;
    endTime: number;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Self time from samples and their time deltas (more exact than hitCount * interval).
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0));
  }
  const totalUs = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const groups = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const file = shorten(url);
    const name = functionName || (url ? '(anonymous)' : '');
    const label = name || functionName || '(program)';
    const where = file ? `${file}:${lineNumber + 1}` : '';
    const key = `${label}@${where}`;
    const entry = fn.get(key) ?? { name: label, where, us: 0 };
    entry.us += us;
    fn.set(key, entry);
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
  }
  const pct = (us: number) => (us / totalUs) * 100;
  return {
    totalMs: totalUs / 1000,
    functions: [...fn.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, selfPct: pct(f.us), selfMs: f.us / 1000 })),
    groups: [...groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([group, us]) => ({ group, selfPct: pct(us), selfMs: us / 1000 })),
  };
}

function shorten(url: string): string {
  if (!url) return '';
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('node_modules/');
  if (nm >= 0) return clean.slice(nm + 'node_modules/'.length);
  const m = /\/(packages\/.*|functions\/.*|test\/.*)$/.exec(clean);
  return m ? m[1]! : clean;
}

/** Package (pg, ioredis, pino...), engine package, node internals, or V8 pseudo-frames (GC, idle, program). */
function groupOf(url: string, functionName: string): string {
  if (!url) return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const clean = url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(clean);
  if (nm) return nm[1]!;
  const pkg = /\/(packages\/[^/]+|functions)\//.exec(clean);
  if (pkg) return pkg[1]!;
  if (clean.startsWith('node:')) return `node:${clean.slice(5).split('/')[0]}`;
  return clean;
}

/** The largest .cpuprofile in a directory (the main thread's; tsx's loader thread writes a small second one). */
function mainProfile(dir: string): string | null {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  return files[0] ?? null;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2]!;
  const file = statSync(target).isDirectory() ? mainProfile(target)! : target;
  const s = summariseProfile(file, Number(process.argv[3] ?? 30));
  console.log(`total sampled: ${s.totalMs.toFixed(0)} ms`);
  console.log('\nself time by package/area:');
  for (const g of s.groups)
    console.log(`  ${g.selfPct.toFixed(1).padStart(5)}%  ${g.selfMs.toFixed(0).padStart(6)} ms  ${g.group}`);
  console.log('\ntop functions by self time:');
  for (const f of s.functions)
    console.log(`  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.name}  ${f.where}`);
}
