/** The shape every scenario reports, and the two renderings: one JSON line per scenario, or a human table. */
import { median, round } from './stats';

export interface Target {
  op: '>=' | '<=' | '<';
  value: number;
}

export interface Metric {
  name: string;
  unit: string;
  /** One value per run (medians are taken over these). */
  values: number[];
  target?: Target;
  /** Shown but not compared (e.g. context figures). */
  info?: boolean;
}

export interface ScenarioResult {
  scenario: string;
  /** False when any run lost or duplicated work, or a check failed: the figures then do not count. */
  ok: boolean;
  runs: number;
  params: Record<string, unknown>;
  metrics: Metric[];
  /** What was verified, in words (one line per check kind, summarised over runs). */
  verified: string[];
  failures: string[];
  notes: string[];
}

export class Collector {
  readonly metrics = new Map<string, Metric>();
  /** check label -> subjects it held for (e.g. which runs or variants). */
  readonly verified = new Map<string, Set<string>>();
  readonly failures: string[] = [];
  readonly notes = new Set<string>();

  add(name: string, unit: string, value: number, extra: { target?: Target; info?: boolean } = {}): void {
    let m = this.metrics.get(name);
    if (!m) {
      m = { name, unit, values: [], ...extra };
      this.metrics.set(name, m);
    }
    m.values.push(value);
  }

  check(label: string, ok: boolean, detail: string, subject = ''): void {
    if (ok) {
      const subjects = this.verified.get(label) ?? new Set<string>();
      if (subject) subjects.add(subject);
      this.verified.set(label, subjects);
    } else this.failures.push(`${subject ? `[${subject}] ` : ''}${label}: ${detail}`);
  }

  note(text: string): void {
    this.notes.add(text);
  }

  result(scenario: string, runs: number, params: Record<string, unknown>): ScenarioResult {
    return {
      scenario,
      ok: this.failures.length === 0,
      runs,
      params,
      metrics: [...this.metrics.values()],
      verified: [...this.verified].map(([label, subjects]) =>
        subjects.size ? `${label} [${[...subjects].join(', ')}]` : label,
      ),
      failures: this.failures,
      notes: [...this.notes],
    };
  }
}

function summarise(m: Metric) {
  const med = median(m.values);
  const min = Math.min(...m.values);
  const max = Math.max(...m.values);
  const spreadPct = m.values.length > 1 && med !== 0 ? ((max - min) / Math.abs(med)) * 100 : 0;
  const met = m.target ? compare(med, m.target) : undefined;
  return { median: med, min, max, spreadPct, met };
}

function compare(value: number, t: Target): boolean {
  return t.op === '>=' ? value >= t.value : t.op === '<=' ? value <= t.value : value < t.value;
}

export function toJson(r: ScenarioResult, machine: object): string {
  return JSON.stringify({
    scenario: r.scenario,
    status: r.ok ? 'PASS' : 'FAIL',
    runs: r.runs,
    params: r.params,
    metrics: Object.fromEntries(
      r.metrics.map((m) => {
        const s = summarise(m);
        return [
          m.name,
          {
            unit: m.unit,
            median: round(s.median),
            min: round(s.min),
            max: round(s.max),
            spread_pct: round(s.spreadPct),
            values: m.values.map(round),
            ...(m.target ? { target: `${m.target.op} ${m.target.value}`, target_met: s.met } : {}),
          },
        ];
      }),
    ),
    verified: r.verified,
    failures: r.failures,
    notes: r.notes,
    machine,
  });
}

export function toTable(r: ScenarioResult): string {
  const rows: string[][] = [['metric', 'median', 'spread (min..max)', 'unit', 'target']];
  for (const m of r.metrics) {
    const s = summarise(m);
    const spread = m.values.length > 1 ? `${fmt(s.min)}..${fmt(s.max)} (±${Math.round(s.spreadPct / 2)}%)` : '';
    const target = m.target ? `${m.target.op} ${m.target.value} ${s.met ? 'ok' : 'MISSED'}` : '';
    rows.push([m.name, fmt(s.median), spread, m.unit, target]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    '  ' + row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const params = Object.entries(r.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const out = [
    `${r.scenario.toUpperCase()}  [${r.ok ? 'PASS' : 'FAIL'}]  runs=${r.runs}  ${params}`,
    line(rows[0]!),
    ...rows.slice(1).map(line),
  ];
  for (const v of r.verified) out.push(`  verified: ${v}`);
  for (const f of r.failures) out.push(`  FAIL: ${f}`);
  for (const n of r.notes) out.push(`  note: ${n}`);
  return out.join('\n');
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const r = round(v);
  return Math.abs(r) >= 10_000 ? r.toLocaleString('en-US') : String(r);
}
