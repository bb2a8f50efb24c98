/** @module cron/search — compiled lookup tables, civil-date math, and the bounded next/prev search from wall times to instants. */
export const DAY = 86_400;
/** Upper bound of every next/prev search, and of the "must fire at least once" check. */
const SEARCH_HORIZON = 3_653 * DAY; // 10 years
const MIN_YEAR = 1800;
const MAX_YEAR = 9999;
/** Longest length of each month (February counted as 29). */
export const MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** One stretch of a zone with a single UTC offset. */
export interface Segment {
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

/** What the search needs of a time zone (zone.ts's Zone): the offset segment an instant falls in. */
interface ZoneSegments {
  segment(t: number): Segment;
}

export interface Compiled {
  readonly hasSeconds: boolean;
  /** true: fixed wall-clock hours (gap -> shift forward, overlap -> first only); false: elapsed time. */
  readonly fixedHour: boolean;
  readonly zone: ZoneSegments;
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

export function buildTables(
  sec: readonly number[],
  min: readonly number[],
  hour: readonly number[],
  dom: readonly number[],
): Int8Array {
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

// ─── Calendar math (proleptic Gregorian, integer days since 1970-01-01) ───────────────────────
//
// Kept beside nextWall/prevWall, which call it once per scanned day: imported from another module, each access
// becomes a getter call under vitest's transform (`0 0 29 2 *` measured ~1.7x slower in cron.perf.test.ts).

// civil()'s out-parameters, so the day scan allocates nothing; zone.ts reads cY as a live binding.
export let cY = 0;
let cM = 0;
let cD = 0;

/** Sets cY/cM/cD from a day number (H. Hinnant's civil_from_days). */
export function civil(z: number): void {
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

export function daysFromCivil(y: number, m: number, d: number): number {
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
export function nextAfter(c: Compiled, s: number): number | null {
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
export function prevBefore(c: Compiled, s: number): number | null {
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
