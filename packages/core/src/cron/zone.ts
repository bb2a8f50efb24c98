/** @module cron/zone — IANA zone names (validation) and per-zone, per-year UTC-offset segments found with Intl. */
import { civil, cY, DAY, daysFromCivil, type Segment } from './search';

const TZ_CACHE_MAX = 2_000;
/** Longer than any IANA name (the longest is 32 characters). */
export const MAX_TZ_LENGTH = 64;

const WALL_RE = /(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)/;
const FIXED_ZONE_RE = /^(?:Etc\/)?(?:UTC|UCT|GMT|Universal|Zulu|Greenwich|GMT[+-]\d{1,2}|GMT[+-]0)$/;
const YEARS_PER_ZONE_MAX = 64;
/** A transition influences wall times for at most its size (tzdb maximum: 24 h, Samoa 2011). */
const TRANSITION_LOOKBACK = 2 * DAY;

export class Zone {
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
export function zoneFor(canonical: string): Zone {
  let z = zones.get(canonical);
  if (z === undefined) {
    z = new Zone(canonical);
    zones.set(canonical, z);
  }
  return z;
}

const tzCache = new Map<string, string | null>();
/** The Intl-canonical name of an IANA zone, or null if it is not one. */
export function canonicalZone(tz: unknown): string | null {
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
