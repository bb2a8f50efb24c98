/** @module cron/parse — parseCron: validation with precise messages, the cron-parser cross-check, and the parse caches. */
import { CronExpressionParser } from 'cron-parser';
import { DOM, DOW, expandField, type FieldSpec, HOUR, MACROS, MINUTE, MONTH, neverFiresReason, SECOND } from './fields';
import { buildTables, type Compiled, MAX_DAYS, nextAfter } from './search';
import { canonicalZone, MAX_TZ_LENGTH, zoneFor } from './zone';

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

const MAX_EXPR_LENGTH = 1024;
const PARSE_CACHE_MAX = 20_000;

const compiledBySchedule = new WeakMap<CronSchedule, Compiled>();
const parseCache = new Map<string, CronParseResult>();

function fail(error: string): { ok: false; error: string } {
  return Object.freeze({ ok: false as const, error });
}

function parseCached(expr: unknown, timezone: unknown): CronParseResult {
  const tz = timezone === undefined ? 'UTC' : timezone;
  if (typeof expr !== 'string') return fail('Cron expression must be a string.');
  if (typeof tz !== 'string')
    return fail('Time zone must be a string (an IANA name such as "UTC" or "America/New_York").');
  // Oversized input is rejected before it can become a cache key.
  if (expr.length > MAX_EXPR_LENGTH)
    return fail(`Cron expression is too long (more than ${MAX_EXPR_LENGTH} characters).`);
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
  const tokens = rawExpr
    .trim()
    .split(/\s+/)
    .filter((s) => s.length > 0);
  if (tokens.length === 0) return 'Cron expression is empty.';
  const expr = tokens.join(' ');
  const q = JSON.stringify(expr);

  let fields: string[];
  let hasSecondsField = false;
  const first = tokens[0]!;
  if (first.startsWith('@')) {
    const name = first.toLowerCase();
    if (tokens.length !== 1)
      return `Cron expression ${q} is invalid: a macro such as ${first} must be used on its own.`;
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
    [SECOND, secF],
    [MINUTE, minF],
    [HOUR, hourF],
    [DOM, domF],
    [MONTH, monF],
    [DOW, dowF],
  ];
  const own: number[][] = [];
  for (const [spec, text] of specs) {
    const r = expandField(spec, text);
    if (typeof r === 'string')
      return `Invalid ${spec.name} field ${JSON.stringify(text)} in cron expression ${q}: ${r}`;
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
  const mismatch = !sameValues(cpSec, secV)
    ? 'second'
    : !sameValues(cpMin, minV)
      ? 'minute'
      : !sameValues(cpHour, hourV)
        ? 'hour'
        : !sameValues(cpMon, monV)
          ? 'month'
          : !sameValues(cpDow, dowV)
            ? 'day-of-week'
            : !sameValues(
                  cpDom.filter((d) => d <= possibleDays),
                  domV.filter((d) => d <= possibleDays),
                )
              ? 'day-of-month'
              : cp.domWildcard !== domStar || cp.dowWildcard !== dowStar
                ? 'day-of-month or day-of-week'
                : null;
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
  const finish = (
    raw: (readonly (number | string)[])[],
    domWildcard: boolean,
    dowWildcard: boolean,
  ): CronParserFields | string => {
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

/** The compiled tables behind a schedule; a hand-built { expr, timezone } is parsed (and validated) first. */
export function compiledOf(schedule: CronSchedule): Compiled {
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
