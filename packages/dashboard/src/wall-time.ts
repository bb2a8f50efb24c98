/**
 * @module dashboard/wall-time — the job form's "Run once at": a date and time as a `datetime-local` input gives it
 * (no offset), read in the job's time zone, and back. A wall time the zone skips or repeats follows the scheduler's
 * DST policy, because the instant is found by the scheduler's own cron search: a time in a spring-forward gap is
 * shifted forward by the gap, a time in a fall-back overlap is its first occurrence.
 */
import { isValidTimeZone, nextFireTime, parseCron } from '@jobs/core';

/** What a `datetime-local` input submits: minutes, or seconds with `step="1"`. */
const WALL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;
const DAY_MS = 86_400_000;

/** True when `value` is a wall time without an offset (what the input gives), not an ISO instant. */
export const isWallTime = (value: string): boolean => WALL.test(value.trim());

/**
 * The instant of a wall time in `zone`, or null when it is no date (2030-02-30) or the zone is unknown.
 * @example wallTimeToInstant('2030-03-31T02:30', 'Europe/Paris')  // 2030-03-31T01:30:00.000Z (the gap, shifted)
 */
export function wallTimeToInstant(value: string, zone: string): Date | null {
  const m = WALL.exec(value.trim());
  if (!m || !isValidTimeZone(zone)) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((n) => Number(n ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const asUtc = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  // Date.UTC rolls 2030-02-30 over into March: a date that does not come back unchanged does not exist.
  if (asUtc.getUTCFullYear() !== y || asUtc.getUTCMonth() !== mo - 1 || asUtc.getUTCDate() !== d || h > 23) return null;
  const parsed = parseCron(`${s} ${mi} ${h} ${d} ${mo} *`, zone);
  if (!parsed.ok) return null;
  // Offsets are within a day of UTC, so searching from two days before finds this year's occurrence, not another.
  return nextFireTime(parsed.schedule, new Date(asUtc.getTime() - 2 * DAY_MS));
}

/**
 * An instant as the input shows it: its wall time in `zone` (seconds included), or '' for an unknown zone.
 * @example instantToWallTime(new Date('2030-01-01T08:00:00Z'), 'Europe/Paris')  // '2030-01-01T09:00:00'
 */
export function instantToWallTime(at: Date, zone: string): string {
  if (!isValidTimeZone(zone)) return '';
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}`;
}
