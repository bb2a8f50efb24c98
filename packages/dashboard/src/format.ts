/** @module dashboard/format — times, durations and excerpts as people read them. Pure functions, no locale of the host. */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `2025-11-30 13:35:35 UTC`. */
export function formatUtc(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;
}

/** `Sun 30 Nov 2025, 14:35:00 CET`: an instant as a wall time in an IANA zone. */
export function formatInZone(d: Date, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat('en-GB', {
      timeZone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    }).format(d);
  } catch {
    return formatUtc(d);
  }
}

/**
 * A duration in the largest sensible units: `6 ms`, `1.2 s`, `3 min 4 s`, `2 h 5 min`, `3 d 4 h`.
 * @example formatDuration(61_000) // '1 min 1 s'
 */
export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 10_000) return `${(abs / 1000).toFixed(1).replace(/\.0$/, '')} s`;
  const s = Math.round(abs / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** `in 4 min`, `12 s ago`, `just now`. */
export function formatRelative(d: Date, now: Date): string {
  const diff = d.getTime() - now.getTime();
  const abs = Math.abs(diff);
  if (abs < 1000) return 'just now';
  const amount = abs < 60_000 ? `${Math.floor(abs / 1000)} s` : formatDuration(abs);
  return diff > 0 ? `in ${amount}` : `${amount} ago`;
}

/** The last non-blank line of a text (where output and errors usually say what happened), cut to `max` characters. */
export function excerpt(text: string | null, max = 80): string | null {
  if (text === null || text === '') return null;
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const last = (lines[lines.length - 1] ?? '').trimEnd();
  return last.length > max ? `${last.slice(0, max - 1)}…` : last;
}

/** `12.5%`, or `–` when there is nothing to divide. */
export function formatPercent(part: number, whole: number): string {
  if (whole === 0) return '–';
  const p = (100 * part) / whole;
  return `${p < 10 && p > 0 ? p.toFixed(1) : Math.round(p)}%`;
}

/** Pretty JSON for display, or null for no value. */
export function formatJson(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return JSON.stringify(value, null, 2);
}
