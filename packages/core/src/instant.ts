/**
 * @module instant — instants to and from text without the general-purpose machinery, for the paths that handle
 * five of them per row of a page: PostgreSQL's text form of a timestamptz (postgres-date runs two regular
 * expressions per value) and the ISO 8601 string of the API (Date#toISOString costs about 0.7 µs a call).
 * Both give exactly what the general functions give, and hand anything outside their fast path to them. And a third,
 * for the API's lists, which skips the Date altogether: PostgreSQL's text of a UTC timestamp straight to that string.
 */

const PAIRS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const TRIPLES = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const DAY_MS = 86_400_000;
/** 0001-01-01 and 9999-12-31T23:59:59.999Z: the years toISOString writes with four digits and no sign. */
const MIN_MS = -62_135_596_800_000;
const MAX_MS = 253_402_300_799_999;

/**
 * Same as `d.toISOString()` (`2026-12-01T15:09:00.123Z`), through arithmetic on the day number (the civil-from-days
 * algorithm); years outside 1..9999 and invalid dates take toISOString itself.
 * @example isoString(new Date(0)) // '1970-01-01T00:00:00.000Z'
 */
export function isoString(d: Date): string {
  const ms = d.getTime();
  if (!(ms >= MIN_MS && ms <= MAX_MS)) return d.toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  const milli = rest - second * 1000;
  return `${PAIRS[Math.floor(year / 100)]}${PAIRS[year % 100]}-${PAIRS[month]}-${PAIRS[day]}T${PAIRS[hour]}:${PAIRS[minute]}:${PAIRS[second]}.${TRIPLES[milli]}Z`;
}

/** Two or four digits at `at`, or NaN. */
function digits(s: string, at: number, count: number): number {
  let v = 0;
  for (let i = at; i < at + count; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return Number.NaN;
    v = v * 10 + c;
  }
  return v;
}

/**
 * PostgreSQL's text output of a timestamptz (`2026-12-01 15:09:00.123456+00`, any offset, any DateStyle ISO) as a
 * Date, truncated to the millisecond as postgres-date does; anything else (BC, infinity, years before 100 or past
 * 9999, another DateStyle) goes to `fallback`.
 */
export function parseTimestamptz(s: string, fallback: (text: string) => Date): Date {
  if (
    s.length < 22 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 32 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58
  ) {
    return fallback(s);
  }
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  let i = 19;
  let milli = 0;
  if (s.charCodeAt(i) === 46) {
    i++;
    let n = 0;
    for (;;) {
      const c = s.charCodeAt(i) - 48;
      if (!(c >= 0 && c <= 9)) break;
      if (n < 3) milli = milli * 10 + c;
      n++;
      i++;
    }
    if (n === 0) return fallback(s);
    if (n === 1) milli *= 100;
    else if (n === 2) milli *= 10;
  }
  const sign = s.charCodeAt(i);
  if (sign !== 43 && sign !== 45) return fallback(s);
  let offset = digits(s, i + 1, 2) * 3600;
  i += 3;
  if (s.charCodeAt(i) === 58) {
    offset += digits(s, i + 1, 2) * 60;
    i += 3;
    if (s.charCodeAt(i) === 58) {
      offset += digits(s, i + 1, 2);
      i += 3;
    }
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, milli) - (sign === 45 ? -offset : offset) * 1000;
  if (i !== s.length || year < 100 || Number.isNaN(utc)) return fallback(s);
  return new Date(utc);
}

/**
 * PostgreSQL's text output of a `timestamp` that holds UTC (`ts AT TIME ZONE 'UTC'`: `2026-12-01 15:09:00.123456`,
 * DateStyle ISO, the fraction's trailing zeros dropped) as the ISO 8601 string isoString gives for that instant
 * (`2026-12-01T15:09:00.123Z`, truncated to the millisecond as the Date path truncates), by cutting the text, with no
 * Date made. Anything else (another DateStyle, BC, years past 9999, infinity) goes to `fallback`.
 * @example isoFromUtcText('2026-12-01 15:09:00.1', fail) // '2026-12-01T15:09:00.100Z'
 */
export function isoFromUtcText(s: string, fallback: (text: string) => string): string {
  const n = s.length;
  if (
    n < 19 ||
    n > 26 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 32 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58
  ) {
    return fallback(s);
  }
  const day = s.slice(0, 10);
  const time = s.slice(11, 19);
  if (n === 19) return `${day}T${time}.000Z`;
  if (s.charCodeAt(19) !== 46 || n === 20) return fallback(s);
  for (let i = 20; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return fallback(s);
  }
  const milli = n >= 23 ? s.slice(20, 23) : n === 22 ? `${s.slice(20, 22)}0` : `${s.slice(20, 21)}00`;
  return `${day}T${time}.${milli}Z`;
}

/** The first instant the scheduler takes as input (a run_at, a preview's from, a backfill's range): the Unix epoch. */
const EARLIEST_INSTANT = new Date('1970-01-01T00:00:00.000Z');
/** The last: the end of year 9999, the last one an ISO 8601 instant writes with four digits. */
const LATEST_INSTANT = new Date('9999-12-31T23:59:59.999Z');

/**
 * Why an instant given as input is outside the supported range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z), or
 * null. Fire times before the epoch are no one's schedule, and the cron search is not defined for them.
 * @example instantRangeProblem(new Date('1900-01-01T00:00:00Z')) // 'is 1900-01-01T00:00:00.000Z; ...'
 */
export function instantRangeProblem(d: Date): string | null {
  const ms = d.getTime();
  if (ms >= EARLIEST_INSTANT.getTime() && ms <= LATEST_INSTANT.getTime()) return null;
  const shown = Number.isNaN(ms) ? 'not a valid instant' : `is ${d.toISOString()}`;
  return `${shown}; instants from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z are supported`;
}
