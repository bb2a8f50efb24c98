/** Helpers of the metrics tests: parse Prometheus text, and simulate what retention does to the roll-ups. */
import type pg from 'pg';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Samples of a Prometheus text exposition (no escapes in our label values). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

export function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/**
 * Ages the roll-ups by `hours` (as if that much time passed: the minutes become closed and foldable), folds them,
 * then deletes what retention would: every minute at or before the watermark, and the finished executions.
 */
export async function ageFoldAndRetain(
  pool: pg.Pool,
  fold: () => Promise<unknown>,
  hours = 2,
): Promise<{ minutesDeleted: number; executionsDeleted: number }> {
  await pool.query(
    `UPDATE execution_totals_mark SET folded_through = folded_through - make_interval(hours => $1 + 1)`,
    [hours],
  );
  await pool.query(`UPDATE execution_minutes SET minute = minute - make_interval(hours => $1)`, [hours]);
  await fold();
  const minutes = await pool.query(
    `DELETE FROM execution_minutes WHERE minute <= (SELECT folded_through FROM execution_totals_mark)`,
  );
  const executions = await pool.query(
    `DELETE FROM executions WHERE status IN ('succeeded', 'failed', 'dead', 'cancelled', 'skipped')`,
  );
  return { minutesDeleted: minutes.rowCount ?? 0, executionsDeleted: executions.rowCount ?? 0 };
}
