// Cron math shared by the scheduler tick, the API validation and the preview endpoint.
//
// ─── Decisions (quoted by the README) ────────────────────────────────────────────────────────────
//
// Syntax
//  - 5 fields `minute hour day-of-month month day-of-week`, or 6 with a leading `second` field.
//    Fields are separated by any run of whitespace; leading/trailing whitespace is ignored.
//  - Each field is a comma list of items; an item is `*`, a value `N`, a range `A-B`, optionally
//    followed by a step `/S` (`*/15`, `10-50/20`); `N/S` means `N-max/S`. Ranges must go upwards
//    (`5-2` and `SAT-SUN` are rejected; write `6-7` or `SAT,SUN`). Steps must be >= 1.
//  - Ranges: second 0-59, minute 0-59, hour 0-23, day-of-month 1-31, month 1-12 (or JAN-DEC),
//    day-of-week 0-7 (0 and 7 are both Sunday, or SUN-SAT). Names are 3 letters, case-insensitive.
//  - `?` is accepted as a synonym of `*` in the two day fields only (Quartz habit).
//  - Macros: @yearly = @annually = `0 0 1 1 *`, @monthly = `0 0 1 * *`, @weekly = `0 0 * * 0`,
//    @daily = @midnight = `0 0 * * *`, @hourly = `0 * * * *` (case-insensitive). @reboot and
//    unknown macros are rejected.
//  - Not supported (rejected with a message, not silently misread): `L`, `W`, `#` and the
//    cron-parser `H` (hash/jitter: it is random per parse unless seeded, so two parses of one
//    expression would disagree).
//  - List items may overlap (`0,*/15`, `8-18,12`, `0,7`), as in every classic cron.
//  - cron-parser@5 is the parser of record for the field values; our own pass in front of it
//    produces precise, human error messages, rejects what we do not support, and must agree with
//    cron-parser on every field (otherwise the expression is rejected). cron-parser rejects
//    overlapping list items ("duplicate values"), so for those each item is parsed separately.
//
// Day-of-month / day-of-week (standard Vixie cron rule)
//  - A day field is "unrestricted" iff it is exactly `*` (or `?`). If both day fields are
//    restricted, a day matches when EITHER matches (`0 0 13 * 5` = every 13th and every Friday).
//    Otherwise only the restricted one applies. cron-parser@5 implements exactly this rule
//    (its non-strict default; verified by the differential tests in cron.test.ts).
//  - Consequence of "exactly `*`": `*/2` or `1-31` count as restricted (Vixie historically treats
//    any field *starting* with `*` as unrestricted; we follow cron-parser and the literal rule).
//
// Expressions that can never fire are rejected
//  - With an unrestricted day-of-week, a day-of-month that never occurs in any selected month
//    (`0 0 30 2 *`, `0 0 31 4,6,9,11 *`) is rejected with "never fires: day 30 does not occur in
//    February". February is taken to have 29 days, so `0 0 29 2 *` is valid (fires in leap years).
//  - As a backstop the expression must also produce a fire time within SEARCH_HORIZON (10 years,
//    enough for the 8-year leap-day gap around 2100) of the time of parsing.
//
// Time zones
//  - Every schedule is evaluated in its own IANA zone (default "UTC"). Zone names are validated
//    with Intl (case-insensitive, links/aliases such as "US/Eastern" accepted; "", "Mars/Base" and
//    UTC-offset strings such as "+05:00" rejected — the latter for consistency across Node
//    versions). The schedule keeps the zone string exactly as given.
//  - Results are instants (Date). The host process TZ never matters: all calendar math is done on
//    integers here, and offsets come from Intl.DateTimeFormat with an explicit timeZone.
//    (cron-parser's iterator also evaluates in the given zone, via luxon — its pinned findings
//    pass unchanged under every host TZ — but we use cron-parser for parsing only; see DST.)
//  - Fire times are whole seconds. "after"/"before" are exclusive: a fire time equal to `after`
//    is not returned by nextFireTime, one equal to `before` not by prevFireTime.
//  - Supported instants are years 1800-9999; outside that, next/prev return null.
//
// DST policy
//  - Fixed-hour schedules (hour field is a value, list or plain range, e.g. `30 2 * * *`,
//    `0 9-17 * * 1-5`, `@daily`) are wall-clock appointments:
//      * a wall time inside a spring-forward gap fires ONCE, shifted forward by the length of the
//        gap (02:30 on 2025-03-09 in America/New_York does not exist -> fires at 03:30 EDT =
//        07:30Z; with Lord Howe's 30-minute gap 02:15 -> 02:45). If that shifted time coincides
//        with another fire time it fires once.
//      * a wall time inside a fall-back overlap fires ONCE, at its first occurrence (01:30 on
//        2025-11-02 in America/New_York -> 05:30Z only, not 06:30Z).
//  - Interval schedules (hour field is `*`, stepped such as `*/2` or `1-23/2`, or covers all 24
//    hours) follow elapsed time: they fire at every real instant whose local wall time matches.
//    In an overlap every real hour fires (`0 * * * *` fires at 01:00 EDT and again at 01:00 EST),
//    and nothing fires for wall times inside a gap (`0 */2 * * *` has no 02:00 on the spring day).
//  - Both rules apply at any time of day, including zones that change at midnight
//    (America/Santiago: `0 0 * * *` on 2025-09-07, where 00:00 does not exist, fires at 01:00).
//  - What cron-parser@5.10 does natively (pinned in cron.dst.test.ts, "cron-parser findings"):
//    next() already shifts gap times forward and fires overlap times once, but prev() does
//    neither (it skips the shifted gap slot, and returns BOTH occurrences of an overlap time), so
//    next and prev disagree; stepped hours (`0 */2 * * *`) get a spurious fire at the end of the
//    gap (03:00 EDT); and each next() costs ~50 µs. So fire times are computed here, not with its
//    iterator: candidate wall times are matched with integer calendar math and mapped to instants
//    through a per-zone, per-year table of UTC-offset transitions found with Intl (daily probes +
//    binary search to the second; tzdb has no two transitions closer than ~7 days since 1970).
//    next and prev enumerate exactly the same set of instants, so they are consistent:
//    next(prev(t) - 1ms) == prev(t), prev(next(t) + 1ms) == next(t), and for t not itself a
//    fire time next(prev(t)) == next(t) and prev(next(t)) == prev(t).
//    cron.dst.test.ts checks every 2025-2026 transition of 7 zones against a brute-force oracle.
//
// Performance (measured in cron.perf.test.ts)
//  - parseCron results (including errors) are cached per (timezone, expression), and the
//    zone-independent part per expression; a cache hit is a Map lookup. A miss costs ~50 µs
//    (~30 µs of it is cron-parser).
//  - nextFireTime/prevFireTime are allocation-light integer math: ~1 µs for typical schedules,
//    ~5 µs for `0 0 29 2 *`. The first use of a zone-year builds its offset table (~1 ms).
//  - Every search is bounded by SEARCH_HORIZON, so nothing can loop forever.

import { CronExpressionParser } from 'cron-parser';

// ─── Public API ─────────────────────────────────────────────────────────────────────────────────

export interface CronSchedule {
  /** The expression, trimmed and with whitespace runs collapsed to one space. */
  readonly expr: string;
  /** The IANA time zone, exactly as given (default "UTC"). */
  readonly timezone: string;
}

export type CronParseResult = { ok: true; schedule: CronSchedule } | { ok: false; error: string };

/** Parses and validates; never throws. error is a human sentence naming what is wrong (shown to API users in a 400). */
export function parseCron(expr: string, timezone?: string /* IANA, default "UTC" */): CronParseResult {
  try {
    return parseCached(expr, timezone);
  } catch (err) {
    // Defensive: nothing above is expected to throw.
    return fail(`Cron expression could not be parsed: ${err instanceof Error ? err.message : String(err)}.`);
  }
}

/** First fire time strictly after `after`, or null if none within the search bound (must never loop forever). */
export function nextFireTime(schedule: CronSchedule, after: Date): Date | null {
  const c = compiledOf(schedule);
  const t = nextAfter(c, Math.floor(instantMs(after, 'after') / 1000) + 1);
  return t === null ? null : new Date(t * 1000);
}

/** The next `count` fire times strictly after `after` (fewer only if the schedule ends). */
export function nextFireTimes(schedule: CronSchedule, after: Date, count: number): Date[] {
  const c = compiledOf(schedule);
  if (count === Infinity) throw new RangeError('nextFireTimes: count must be finite');
  const n = Math.floor(count);
  const out: Date[] = [];
  if (!(n > 0)) return out;
  let s = Math.floor(instantMs(after, 'after') / 1000) + 1;
  while (out.length < n) {
    const t = nextAfter(c, s);
    if (t === null) break;
    out.push(new Date(t * 1000));
    s = t + 1;
  }
  return out;
}

/** Latest fire time strictly before `before`, or null (used for misfire handling: "the most recent missed slot"). */
export function prevFireTime(schedule: CronSchedule, before: Date): Date | null {
  const c = compiledOf(schedule);
  const t = prevBefore(c, Math.ceil(instantMs(before, 'before') / 1000) - 1);
  return t === null ? null : new Date(t * 1000);
}

export function isValidTimeZone(tz: string): boolean {
  return canonicalZone(tz) !== null;
}

/** True if the expression has a seconds field (6 fields) — used to pick tick lookahead hints. */
export function hasSeconds(schedule: CronSchedule): boolean {
  return compiledOf(schedule).hasSeconds;
}

// ─── Constants ──────────────────────────────────────────────────────────────────────────────────

const DAY = 86_400;
/** Upper bound of every next/prev search, and of the "must fire at least once" check. */
const SEARCH_HORIZON = 3_653 * DAY; // 10 years
const MIN_YEAR = 1800;
const MAX_YEAR = 9999;
const MAX_EXPR_LENGTH = 1024;
const PARSE_CACHE_MAX = 20_000;
const TZ_CACHE_MAX = 2_000;
/** Longer than any IANA name (the longest is 32 characters). */
const MAX_TZ_LENGTH = 64;

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_FULL = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];
const DOW_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
/** Longest length of each month (February counted as 29). */
const MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** value of names[0] */
  readonly nameBase?: number;
  readonly allowQuestion?: boolean;
}

const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DOM: FieldSpec = { name: 'day-of-month', min: 1, max: 31, allowQuestion: true };
const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 };
const DOW: FieldSpec = { name: 'day-of-week', min: 0, max: 7, names: DOW_NAMES, nameBase: 0, allowQuestion: true };

// ─── Parsing ────────────────────────────────────────────────────────────────────────────────────

interface Compiled {
  readonly hasSeconds: boolean;
  /** true: fixed wall-clock hours (gap -> shift forward, overlap -> first only); false: elapsed time. */
  readonly fixedHour: boolean;
  readonly zone: Zone;
  /** Lookup tables, see buildTables. */
  readonly t: Int8Array;
  readonly firstS: number;
  readonly lastS: number;
  readonly firstM: number;
  readonly lastM: number;
  readonly monthMask: number; // bits 1..12
  readonly domMask: number; // bits 1..31 (all set when unrestricted)
  readonly dowMask: number; // bits 0..6 (all set when unrestricted)
  /** both day fields restricted: OR them, otherwise AND (the unrestricted mask is full). */
  readonly dayOr: boolean;
}

// Offsets into Compiled.t
const NS = 0; // next second >= v: 61 entries (index 60 -> -1)
const PS = 61; // prev second <= v: 60 entries
const NM = 121; // next minute >= v: 61
const PM = 182; // prev minute <= v: 60
const NH = 242; // next hour >= v: 25
const PH = 267; // prev hour <= v: 24
const ND = 291; // next day-of-month >= v: 33 (indices 0..32)
const PD = 324; // prev day-of-month <= v: 32 (indices 0..31)
const TABLE_SIZE = 356;

const compiledBySchedule = new WeakMap<CronSchedule, Compiled>();
const parseCache = new Map<string, CronParseResult>();

function fail(error: string): { ok: false; error: string } {
  return Object.freeze({ ok: false as const, error });
}

function parseCached(expr: unknown, timezone: unknown): CronParseResult {
  const tz = timezone === undefined ? 'UTC' : timezone;
  if (typeof expr !== 'string') return fail('Cron expression must be a string.');
  if (typeof tz !== 'string') return fail('Time zone must be a string (an IANA name such as "UTC" or "America/New_York").');
  // Oversized input is rejected before it can become a cache key.
  if (expr.length > MAX_EXPR_LENGTH) return fail(`Cron expression is too long (more than ${MAX_EXPR_LENGTH} characters).`);
  if (tz.length > MAX_TZ_LENGTH) return fail(unknownZone(tz));
  const key = `${tz}\u0000${expr}`;
  const hit = parseCache.get(key);
  if (hit !== undefined) return hit;
  const result = parseUncached(expr, tz);
  if (parseCache.size >= PARSE_CACHE_MAX) {
    const oldest = parseCache.keys().next();
    if (!oldest.done) parseCache.delete(oldest.value);
  }
  parseCache.set(key, result);
  return result;
}

function unknownZone(tz: string): string {
  const shown = tz.length > MAX_TZ_LENGTH ? `${tz.slice(0, MAX_TZ_LENGTH)}…` : tz;
  return `Unknown time zone ${JSON.stringify(shown)}: expected an IANA time zone name such as "UTC" or "America/New_York".`;
}

function parseUncached(rawExpr: string, tz: string): CronParseResult {
  const canonical = canonicalZone(tz);
  if (canonical === null) return fail(unknownZone(tz));
  const e = parseExpressionCached(rawExpr);
  if (typeof e === 'string') return fail(e);
  const compiled: Compiled = {
    hasSeconds: e.hasSeconds,
    fixedHour: e.fixedHour,
    zone: zoneFor(canonical),
    t: e.t,
    firstS: e.firstS,
    lastS: e.lastS,
    firstM: e.firstM,
    lastM: e.lastM,
    monthMask: e.monthMask,
    domMask: e.domMask,
    dowMask: e.dowMask,
    dayOr: e.dayOr,
  };
  // Backstop: it must actually fire within the horizon. After the calendar check in
  // parseExpression this cannot fail for real zones (DST only removes interval slots, never
  // whole days), but it guarantees the contract.
  if (nextAfter(compiled, Math.floor(Date.now() / 1000) + 1) === null) {
    return fail(`Cron expression ${JSON.stringify(e.expr)} never fires in time zone ${tz} within the next 10 years.`);
  }
  const schedule: CronSchedule = Object.freeze({ expr: e.expr, timezone: tz });
  compiledBySchedule.set(schedule, compiled);
  return Object.freeze({ ok: true as const, schedule });
}

/** The zone-independent part of a compiled schedule. */
type ParsedExpression = Omit<Compiled, 'zone'> & { readonly expr: string };

const exprCache = new Map<string, ParsedExpression | string>();
function parseExpressionCached(rawExpr: string): ParsedExpression | string {
  const hit = exprCache.get(rawExpr);
  if (hit !== undefined) return hit;
  const r = parseExpression(rawExpr);
  if (exprCache.size >= PARSE_CACHE_MAX) {
    const oldest = exprCache.keys().next();
    if (!oldest.done) exprCache.delete(oldest.value);
  }
  exprCache.set(rawExpr, r);
  return r;
}

/** Parses and validates the expression; returns the error sentence on failure. */
function parseExpression(rawExpr: string): ParsedExpression | string {
  if (rawExpr.length > MAX_EXPR_LENGTH) return `Cron expression is too long (more than ${MAX_EXPR_LENGTH} characters).`;
  const tokens = rawExpr.trim().split(/\s+/).filter((s) => s.length > 0);
  if (tokens.length === 0) return 'Cron expression is empty.';
  const expr = tokens.join(' ');
  const q = JSON.stringify(expr);

  let fields: string[];
  let hasSecondsField = false;
  const first = tokens[0]!;
  if (first.startsWith('@')) {
    const name = first.toLowerCase();
    if (tokens.length !== 1) return `Cron expression ${q} is invalid: a macro such as ${first} must be used on its own.`;
    if (name === '@reboot') return 'Cron macro "@reboot" is not supported: a job schedule must be time-based.';
    const macro = MACROS[name];
    if (macro === undefined) {
      return `Unknown cron macro ${JSON.stringify(first)}: supported macros are @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly.`;
    }
    fields = macro.split(' ');
  } else if (tokens.length === 5 || tokens.length === 6) {
    fields = tokens;
    hasSecondsField = tokens.length === 6;
  } else {
    return (
      `Cron expression ${q} has ${tokens.length} field${tokens.length === 1 ? '' : 's'}; expected 5 ` +
      '(minute hour day-of-month month day-of-week) or 6 (second minute hour day-of-month month day-of-week).'
    );
  }
  const six = fields.length === 6 ? fields : ['0', ...fields];
  const [secF, minF, hourF, domF, monF, dowF] = six as [string, string, string, string, string, string];

  // 1. Our own pass: precise messages, unsupported syntax, and the expansion used for cross-checks.
  const specs: [FieldSpec, string][] = [
    [SECOND, secF], [MINUTE, minF], [HOUR, hourF], [DOM, domF], [MONTH, monF], [DOW, dowF],
  ];
  const own: number[][] = [];
  for (const [spec, text] of specs) {
    const r = expandField(spec, text);
    if (typeof r === 'string') return `Invalid ${spec.name} field ${JSON.stringify(text)} in cron expression ${q}: ${r}`;
    own.push(r);
  }
  const [secV, minV, hourV, domV, monV, dowV] = own as [number[], number[], number[], number[], number[], number[]];
  const domStar = domF === '*' || domF === '?';
  const dowStar = dowF === '*' || dowF === '?';

  // 2. Never-firing calendar combinations (only possible when day-of-week does not rescue them).
  if (dowStar && !monV.some((m) => domV.some((d) => d <= MAX_DAYS[m - 1]!))) {
    return `Cron expression ${q} never fires: ${neverFiresReason(domV, monV)}.`;
  }

  // 3. cron-parser, the parser of record; both passes must agree.
  const cp = cronParserFields(six);
  if (typeof cp === 'string') return `Invalid cron expression ${q}: ${cp}.`;
  const [cpSec, cpMin, cpHour, cpDom, cpMon, cpDow] = cp.values;
  const possibleDays = cpMon.length === 1 ? MAX_DAYS[cpMon[0]! - 1]! : 31;
  const mismatch =
    !sameValues(cpSec, secV) ? 'second' :
    !sameValues(cpMin, minV) ? 'minute' :
    !sameValues(cpHour, hourV) ? 'hour' :
    !sameValues(cpMon, monV) ? 'month' :
    !sameValues(cpDow, dowV) ? 'day-of-week' :
    !sameValues(cpDom.filter((d) => d <= possibleDays), domV.filter((d) => d <= possibleDays)) ? 'day-of-month' :
    cp.domWildcard !== domStar || cp.dowWildcard !== dowStar ? 'day-of-month or day-of-week' :
    null;
  if (mismatch !== null) {
    return `Cron expression ${q} is not supported: its ${mismatch} field is read differently by different cron implementations.`;
  }

  return {
    expr,
    hasSeconds: hasSecondsField,
    fixedHour: !(hourF.includes('*') || hourF.includes('/') || cpHour.length === 24),
    t: buildTables(cpSec, cpMin, cpHour, cpDom),
    firstS: cpSec[0]!,
    lastS: cpSec[cpSec.length - 1]!,
    firstM: cpMin[0]!,
    lastM: cpMin[cpMin.length - 1]!,
    monthMask: mask(cpMon),
    domMask: domStar ? 0xfffffffe : mask(cpDom),
    dowMask: dowStar ? 0x7f : mask(cpDow),
    dayOr: !domStar && !dowStar,
  };
}

function sameValues(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

interface CronParserFields {
  /** second, minute, hour, day-of-month, month, day-of-week (0-6) — each sorted and unique. */
  readonly values: [number[], number[], number[], number[], number[], number[]];
  readonly domWildcard: boolean;
  readonly dowWildcard: boolean;
}

// Field values according to cron-parser, or its error message. cron-parser@5 rejects lists whose
// items overlap (`0,*/15`, `8-18,12`, `0,7` for Sunday) although every other cron accepts them, so
// in that case each list item is parsed on its own and the results are united.
function cronParserFields(six: readonly string[]): CronParserFields | string {
  const fromFields = (f: ReturnType<typeof CronExpressionParser.parse>['fields']) =>
    [f.second.values, f.minute.values, f.hour.values, f.dayOfMonth.values, f.month.values, f.dayOfWeek.values] as const;
  const finish = (raw: (readonly (number | string)[])[], domWildcard: boolean, dowWildcard: boolean): CronParserFields | string => {
    const values: number[][] = [];
    for (let i = 0; i < 6; i++) {
      const sets = raw[i]!;
      if (sets.some((v) => typeof v !== 'number')) return 'it uses special characters that are not supported';
      const nums = (sets as number[]).map((v) => (i === 5 ? v % 7 : v));
      values.push([...new Set(nums)].sort((a, b) => a - b));
    }
    return { values: values as CronParserFields['values'], domWildcard, dowWildcard };
  };
  const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).replace(/\.$/, '');
  try {
    const f = CronExpressionParser.parse(six.join(' '), { tz: 'UTC', currentDate: 0 }).fields;
    return finish([...fromFields(f)], f.dayOfMonth.isWildcard, f.dayOfWeek.isWildcard);
  } catch (err) {
    if (!/duplicate values/i.test(message(err))) return message(err);
  }
  const raw: (number | string)[][] = [[], [], [], [], [], []];
  let domWildcard = false;
  let dowWildcard = false;
  for (let i = 0; i < 6; i++) {
    for (const item of six[i]!.split(',')) {
      const template = ['0', '*', '*', '*', '*', '*'];
      template[i] = item;
      try {
        const f = CronExpressionParser.parse(template.join(' '), { tz: 'UTC', currentDate: 0 }).fields;
        raw[i]!.push(...fromFields(f)[i]!);
        if (i === 3) domWildcard = f.dayOfMonth.isWildcard && six[i] === item;
        if (i === 5) dowWildcard = f.dayOfWeek.isWildcard && six[i] === item;
      } catch (err) {
        return message(err);
      }
    }
  }
  return finish(raw, domWildcard, dowWildcard);
}

/** Bit mask of values 0..31 (only used for month, day-of-month and day-of-week). */
function mask(values: readonly number[]): number {
  let m = 0;
  for (const v of values) m |= 1 << v;
  return m >>> 0;
}

function neverFiresReason(days: number[], months: number[]): string {
  const impossible = days.filter((d) => months.every((m) => d > MAX_DAYS[m - 1]!));
  const dayText = impossible.length === 1 ? `day ${impossible[0]}` : `days ${joinList(impossible.map(String), 'and')}`;
  const verb = impossible.length === 1 ? 'does' : 'do';
  return `${dayText} ${verb} not occur in ${joinList(months.map((m) => MONTH_FULL[m - 1]!), 'or')}`;
}

function joinList(items: string[], conj: string): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${conj} ${items[items.length - 1]}`;
}

const SPECIAL_MSG = 'the special characters L, W, # and H are not supported (use plain values, ranges, lists and steps)';

/** Expands one field to its sorted values, or returns an error sentence (without the field prefix). */
function expandField(spec: FieldSpec, text: string): number[] | string {
  if (/[#()]/.test(text)) return `${SPECIAL_MSG}.`;
  const seen = new Uint8Array(64);
  for (const item of text.split(',')) {
    if (item === '') return 'it contains an empty list item.';
    const parts = item.split('/');
    if (parts.length > 2) return `"${item}" has more than one "/".`;
    const [base, stepText] = parts as [string, string | undefined];
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText)) return `step "${stepText}" in "${item}" is not a whole number.`;
      step = Number(stepText);
      if (step < 1) return `step in "${item}" must be at least 1.`;
    }
    let lo: number;
    let hi: number;
    if (base === '*' || base === '?') {
      if (base === '?' && !spec.allowQuestion) return '"?" is only allowed in the day-of-month and day-of-week fields.';
      lo = spec.min;
      hi = spec.max;
    } else {
      const dash = base.split('-');
      if (dash.length > 2) return `"${item}" is not a valid range.`;
      const a = value(spec, dash[0]!, item);
      if (typeof a === 'string') return a;
      lo = a;
      if (dash.length === 2) {
        const b = value(spec, dash[1]!, item);
        if (typeof b === 'string') return b;
        if (b < a) return `range "${base}" goes backwards (its start is after its end).`;
        hi = b;
      } else {
        hi = stepText !== undefined ? spec.max : a;
      }
    }
    for (let v = lo; v <= hi; v += step) seen[spec === DOW ? v % 7 : v] = 1;
  }
  const out: number[] = [];
  for (let v = 0; v < 64; v++) if (seen[v] === 1) out.push(v);
  return out;
}

function value(spec: FieldSpec, tok: string, item: string): number | string {
  if (tok === '') return `"${item}" is missing a number.`;
  if (/^\d+$/.test(tok)) {
    const v = tok.length > 4 ? Infinity : Number(tok);
    if (v < spec.min || v > spec.max) return `${tok} is out of range (${spec.min}-${spec.max}).`;
    return v;
  }
  if (/^[a-z]+$/i.test(tok) && spec.names) {
    const i = spec.names.indexOf(tok.toLowerCase());
    if (i >= 0) return i + spec.nameBase!;
  }
  if (/^(?:L|W|LW|H|\d+[LW])$/i.test(tok)) return `${SPECIAL_MSG}.`;
  if (spec.names) {
    const example = spec === MONTH ? 'JAN-DEC or 1-12' : 'SUN-SAT or 0-7';
    return `"${tok}" is not a valid ${spec.name} (use ${example}).`;
  }
  return `"${tok}" is not a number.`;
}

function buildTables(sec: readonly number[], min: readonly number[], hour: readonly number[], dom: readonly number[]): Int8Array {
  const t = new Int8Array(TABLE_SIZE);
  const has = new Uint8Array(64);
  const fill = (vals: readonly number[], size: number, next: number, prev: number): void => {
    has.fill(0);
    for (const v of vals) has[v] = 1;
    t[next + size] = -1;
    for (let v = size - 1, n = -1; v >= 0; v--) t[next + v] = n = has[v] === 1 ? v : n;
    for (let v = 0, p = -1; v < size; v++) t[prev + v] = p = has[v] === 1 ? v : p;
  };
  fill(sec, 60, NS, PS);
  fill(min, 60, NM, PM);
  fill(hour, 24, NH, PH);
  fill(dom, 32, ND, PD); // indices 0..32 / 0..31; day 0 never matches
  return t;
}

function compiledOf(schedule: CronSchedule): Compiled {
  const c = compiledBySchedule.get(schedule);
  if (c !== undefined) return c;
  // A structurally-built { expr, timezone } (e.g. read back from the database): parse it.
  const r = schedule != null ? parseCron(schedule.expr, schedule.timezone) : fail('schedule is missing');
  if (!r.ok) throw new TypeError(`Invalid cron schedule: ${r.error}`);
  const compiled = compiledBySchedule.get(r.schedule)!;
  // Only frozen objects can be remembered safely (a mutable one could change its expr later).
  if (typeof schedule === 'object' && Object.isFrozen(schedule)) compiledBySchedule.set(schedule, compiled);
  return compiled;
}

function instantMs(d: Date, name: string): number {
  // Not `instanceof`: a Date from another realm (vm, worker) is just as good.
  const ms = Object.prototype.toString.call(d) === '[object Date]' ? d.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`${name} must be a valid Date`);
  return ms;
}

// ─── Calendar math (proleptic Gregorian, integer days since 1970-01-01) ───────────────────────

let cY = 0;
let cM = 0;
let cD = 0;

/** Sets cY/cM/cD from a day number (H. Hinnant's civil_from_days). */
function civil(z: number): void {
  z += 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  cD = doy - Math.floor((153 * mp + 2) / 5) + 1;
  cM = mp < 10 ? mp + 3 : mp - 9;
  cY = yoe + era * 400 + (cM <= 2 ? 1 : 0);
}

function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return MAX_DAYS[m - 1]!;
}

function weekday(days: number): number {
  return (((days + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday
}

function dayMatches(c: Compiled, d: number, days: number): boolean {
  const domOk = (c.domMask >>> d) & 1;
  const dowOk = (c.dowMask >>> weekday(days)) & 1;
  return c.dayOr ? (domOk | dowOk) === 1 : (domOk & dowOk) === 1;
}

/** Smallest matching second-of-day >= sod, or -1. */
function nextTimeOfDay(c: Compiled, sod: number): number {
  const t = c.t;
  const h = Math.floor(sod / 3600);
  const m = Math.floor(sod / 60) % 60;
  const s = sod % 60;
  const H = t[NH + h]!;
  if (H < 0) return -1;
  if (H > h) return H * 3600 + c.firstM * 60 + c.firstS;
  const M = t[NM + m]!;
  if (M > m) return h * 3600 + M * 60 + c.firstS;
  if (M === m) {
    const S = t[NS + s]!;
    if (S >= 0) return h * 3600 + m * 60 + S;
    const M2 = t[NM + m + 1]!;
    if (M2 >= 0) return h * 3600 + M2 * 60 + c.firstS;
  }
  const H2 = t[NH + h + 1]!;
  return H2 < 0 ? -1 : H2 * 3600 + c.firstM * 60 + c.firstS;
}

/** Largest matching second-of-day <= sod, or -1. */
function prevTimeOfDay(c: Compiled, sod: number): number {
  const t = c.t;
  const h = Math.floor(sod / 3600);
  const m = Math.floor(sod / 60) % 60;
  const s = sod % 60;
  const H = t[PH + h]!;
  if (H < 0) return -1;
  if (H < h) return H * 3600 + c.lastM * 60 + c.lastS;
  const M = t[PM + m]!;
  if (M >= 0 && M < m) return h * 3600 + M * 60 + c.lastS;
  if (M === m) {
    const S = t[PS + s]!;
    if (S >= 0) return h * 3600 + m * 60 + S;
    const M2 = m > 0 ? t[PM + m - 1]! : -1;
    if (M2 >= 0) return h * 3600 + M2 * 60 + c.lastS;
  }
  const H2 = h > 0 ? t[PH + h - 1]! : -1;
  return H2 < 0 ? -1 : H2 * 3600 + c.lastM * 60 + c.lastS;
}

/**
 * Smallest matching wall time w with from <= w < limit, or null. Wall times are "local seconds":
 * the local date/time read as if it were UTC, so they are plain integers.
 */
function nextWall(c: Compiled, from: number, limit: number): number | null {
  let days = Math.floor(from / DAY);
  let sod = from - days * DAY;
  while (days * DAY < limit) {
    civil(days);
    if (((c.monthMask >>> cM) & 1) === 0) {
      days = cM === 12 ? daysFromCivil(cY + 1, 1, 1) : daysFromCivil(cY, cM + 1, 1);
      sod = 0;
      continue;
    }
    if (!dayMatches(c, cD, days)) {
      const dim = daysInMonth(cY, cM);
      if (!c.dayOr && c.dowMask === 0x7f) {
        // only day-of-month restricts: jump straight to the next allowed day
        const nd = c.t[ND + cD + 1]!;
        days = nd < 0 || nd > dim ? days + (dim - cD) + 1 : days + (nd - cD);
      } else {
        days += 1;
      }
      sod = 0;
      continue;
    }
    const tod = nextTimeOfDay(c, sod);
    if (tod >= 0) {
      const w = days * DAY + tod;
      return w < limit ? w : null;
    }
    days += 1;
    sod = 0;
  }
  return null;
}

/** Largest matching wall time w with lower <= w <= from, or null. */
function prevWall(c: Compiled, from: number, lower: number): number | null {
  let days = Math.floor(from / DAY);
  let sod = from - days * DAY;
  while ((days + 1) * DAY > lower) {
    civil(days);
    if (((c.monthMask >>> cM) & 1) === 0) {
      days = daysFromCivil(cY, cM, 1) - 1; // last day of the previous month
      sod = DAY - 1;
      continue;
    }
    if (!dayMatches(c, cD, days)) {
      if (!c.dayOr && c.dowMask === 0x7f) {
        const pd = c.t[PD + cD - 1]!;
        days = pd <= 0 ? days - cD : days - (cD - pd);
      } else {
        days -= 1;
      }
      sod = DAY - 1;
      continue;
    }
    const tod = prevTimeOfDay(c, sod);
    if (tod >= 0) {
      const w = days * DAY + tod;
      return w >= lower ? w : null;
    }
    days -= 1;
    sod = DAY - 1;
  }
  return null;
}

// ─── Instants (DST policy) ──────────────────────────────────────────────────────────────────────
//
// The time line of a zone is cut into segments of constant UTC offset `o` (at offset transitions,
// and at UTC year boundaries for caching). Within a segment, instant = wall - o is a bijection.
// Each segment also knows the latest real transition at or before its start (instant x, offset
// before it p; x = start and p = o when there is none in the last 2 days). The fire instants that
// lie inside segment [start, end) are:
//   elapsed-time schedules: matching walls in [start + o, end + o)                 -> wall - o
//   fixed-hour schedules:   matching walls in [max(start + o, x + p), end + o)     -> wall - o
//                           (after a fall-back, walls below x + p already happened before
//                           the transition: first occurrence only)
//                         + if p < o (spring-forward gap [x + p, x + o)): matching gap walls
//                           -> wall - p, i.e. shifted forward by the gap into [x, x + o - p),
//                           taking those that land inside [start, end)
// next and prev scan the segments in order and take the min/max of exactly that set.

const MIN_T = daysFromCivil(MIN_YEAR, 1, 1) * DAY;
const MAX_T = daysFromCivil(MAX_YEAR + 1, 1, 1) * DAY - 1;

/** Smallest fire instant (epoch seconds) >= s, or null within the horizon. */
function nextAfter(c: Compiled, s: number): number | null {
  if (s < MIN_T) s = MIN_T;
  if (s > MAX_T) return null;
  const limit = Math.min(s + SEARCH_HORIZON, MAX_T);
  let seg = c.zone.segment(s);
  let from = s;
  for (;;) {
    const { end, off: o, transAt: x, transFrom: p } = seg;
    let best = Infinity;
    let lo = from + o;
    if (c.fixedHour && p > o) lo = Math.max(lo, x + p);
    const hi = Math.min(end, limit + 1) + o;
    if (lo < hi) {
      const w = nextWall(c, lo, hi);
      if (w !== null) best = w - o;
    }
    if (c.fixedHour && p < o) {
      const glo = from + p;
      const ghi = Math.min(end, x + o - p) + p;
      if (glo < ghi) {
        const w = nextWall(c, glo, ghi);
        if (w !== null && w - p < best) best = w - p;
      }
    }
    if (best !== Infinity) return best <= limit ? best : null;
    if (end > limit) return null;
    seg = c.zone.segment(end);
    from = end;
  }
}

/** Largest fire instant (epoch seconds) <= s, or null within the horizon. */
function prevBefore(c: Compiled, s: number): number | null {
  if (s > MAX_T) s = MAX_T;
  if (s < MIN_T) return null;
  const lower = Math.max(s - SEARCH_HORIZON, MIN_T);
  let seg = c.zone.segment(s);
  let to = s;
  for (;;) {
    const { start, off: o, transAt: x, transFrom: p } = seg;
    let best = -Infinity;
    let lo = Math.max(start, lower) + o;
    if (c.fixedHour && p > o) lo = Math.max(lo, x + p);
    const hi = to + o;
    if (lo <= hi) {
      const w = prevWall(c, hi, lo);
      if (w !== null) best = w - o;
    }
    if (c.fixedHour && p < o) {
      const glo = start + p;
      const ghi = Math.min(to, x + o - p - 1) + p;
      if (glo <= ghi) {
        const w = prevWall(c, ghi, glo);
        if (w !== null && w - p > best) best = w - p;
      }
    }
    if (best !== -Infinity) return best >= lower ? best : null;
    if (start <= lower) return null;
    seg = c.zone.segment(start - 1);
    to = start - 1;
  }
}

// ─── Time zones ─────────────────────────────────────────────────────────────────────────────────

interface Segment {
  /** first instant (epoch seconds) */
  readonly start: number;
  /** first instant after the segment */
  readonly end: number;
  /** UTC offset in seconds (wall = instant + off) */
  readonly off: number;
  /** instant of the latest offset transition at or before start (start itself if none recent) */
  readonly transAt: number;
  /** offset before that transition (equal to off if none) */
  readonly transFrom: number;
}

const WALL_RE = /(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)/;
const FIXED_ZONE_RE = /^(?:Etc\/)?(?:UTC|UCT|GMT|Universal|Zulu|Greenwich|GMT[+-]\d{1,2}|GMT[+-]0)$/;
const YEARS_PER_ZONE_MAX = 64;
/** A transition influences wall times for at most its size (tzdb maximum: 24 h, Samoa 2011). */
const TRANSITION_LOOKBACK = 2 * DAY;

class Zone {
  private readonly fmt: Intl.DateTimeFormat;
  private readonly fixed: number | null;
  private readonly years = new Map<number, Segment[]>();

  constructor(readonly name: string) {
    this.fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    this.fixed = FIXED_ZONE_RE.test(name) ? this.offsetAt(0) : null;
  }

  /** UTC offset in seconds at instant t (epoch seconds). */
  offsetAt(t: number): number {
    const m = WALL_RE.exec(this.fmt.format(t * 1000));
    if (m === null) throw new Error(`unexpected Intl output for ${this.name}`);
    const wall = daysFromCivil(+m[3]!, +m[1]!, +m[2]!) * DAY + +m[4]! * 3600 + +m[5]! * 60 + +m[6]!;
    return wall - t;
  }

  /** The segment containing instant t. */
  segment(t: number): Segment {
    civil(Math.floor(t / DAY));
    const y = cY;
    let segs = this.years.get(y);
    if (segs === undefined) {
      if (this.years.size >= YEARS_PER_ZONE_MAX) this.years.clear();
      segs = this.buildYear(y);
      this.years.set(y, segs);
    }
    for (const s of segs) if (t < s.end) return s;
    return segs[segs.length - 1]!;
  }

  private buildYear(y: number): Segment[] {
    const start = daysFromCivil(y, 1, 1) * DAY;
    const end = daysFromCivil(y + 1, 1, 1) * DAY;
    if (this.fixed !== null) return [{ start, end, off: this.fixed, transAt: start, transFrom: this.fixed }];
    const transitions = this.transitions(start - TRANSITION_LOOKBACK, end);
    const segs: Segment[] = [];
    const first = this.offsetAt(start);
    let cur = { start, off: first, transAt: start, transFrom: first };
    for (const tr of transitions) {
      if (tr.at <= start) {
        cur.transAt = tr.at;
        cur.transFrom = tr.from;
      } else {
        segs.push({ ...cur, end: tr.at });
        cur = { start: tr.at, off: tr.to, transAt: tr.at, transFrom: tr.from };
      }
    }
    segs.push({ ...cur, end });
    return segs;
  }

  /** Offset transitions in (a, b): daily probes (tzdb transitions are >= ~7 days apart since 1970), each change binary-searched to the second. */
  private transitions(a: number, b: number): { at: number; from: number; to: number }[] {
    const out: { at: number; from: number; to: number }[] = [];
    let oa = this.offsetAt(a);
    for (let p = Math.min(a + DAY, b - 1); ; p = Math.min(p + DAY, b - 1)) {
      const op = this.offsetAt(p);
      while (op !== oa) {
        let lo = a;
        let hi = p;
        while (hi - lo > 1) {
          const mid = Math.floor((lo + hi) / 2);
          if (this.offsetAt(mid) === oa) lo = mid;
          else hi = mid;
        }
        const ox = this.offsetAt(hi);
        out.push({ at: hi, from: oa, to: ox });
        a = hi;
        oa = ox;
      }
      a = p;
      oa = op;
      if (p === b - 1) break;
    }
    return out;
  }
}

const zones = new Map<string, Zone>();
function zoneFor(canonical: string): Zone {
  let z = zones.get(canonical);
  if (z === undefined) {
    z = new Zone(canonical);
    zones.set(canonical, z);
  }
  return z;
}

const tzCache = new Map<string, string | null>();
/** The Intl-canonical name of an IANA zone, or null if it is not one. */
function canonicalZone(tz: unknown): string | null {
  if (typeof tz !== 'string' || tz.length > MAX_TZ_LENGTH) return null;
  const hit = tzCache.get(tz);
  if (hit !== undefined) return hit;
  let result: string | null = null;
  // Names only: Intl in newer Node versions also accepts offsets such as "+05:00"; we do not.
  if (/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz)) {
    try {
      result = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
    } catch {
      result = null;
    }
  }
  if (tzCache.size >= TZ_CACHE_MAX) tzCache.clear();
  tzCache.set(tz, result);
  return result;
}
