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

import { compiledOf, type CronSchedule } from './parse';
import { nextAfter, prevBefore } from './search';
import { canonicalZone } from './zone';

// ─── Public API ─────────────────────────────────────────────────────────────────────────────────

export { type CronSchedule, parseCron } from './parse';

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

function instantMs(d: Date, name: string): number {
  // Not `instanceof`: a Date from another realm (vm, worker) is just as good.
  const ms = Object.prototype.toString.call(d) === '[object Date]' ? d.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`${name} must be a valid Date`);
  return ms;
}
