// DST and time-zone behaviour of the cron module, plus what cron-parser 5 does natively.
//
// Policy under test (see the header of index.ts):
//  - fixed-hour schedules: a wall time in a spring-forward gap fires once, shifted forward by the
//    gap; a wall time in a fall-back overlap fires once, at its first occurrence;
//  - interval schedules (hour `*`, stepped, or all 24 hours): fire at every real instant whose wall
//    time matches (both passes of an overlap, nothing for the gap).
//
// Transitions used (checked against this Node's tzdata in "tzdata sanity" below):
//   America/New_York    2025-03-09T07:00Z 02:00 EST -> 03:00 EDT   2025-11-02T06:00Z 02:00 EDT -> 01:00 EST
//   Australia/Sydney    2025-04-05T16:00Z 03:00 AEDT -> 02:00 AEST 2025-10-04T16:00Z 02:00 AEST -> 03:00 AEDT
//   Australia/Lord_Howe 2025-04-05T15:00Z 02:00 +11 -> 01:30 +1030  2025-10-04T15:30Z 02:00 +1030 -> 02:30 +11
//   America/Santiago    2025-04-06T03:00Z 24:00 -03 -> 23:00 -04    2025-09-07T04:00Z 24:00 -04 -> 01:00 -03 (midnight)
//   America/Havana      2025-03-09T05:00Z 00:00 CST -> 01:00 CDT    2025-11-02T05:00Z 01:00 CDT -> 00:00 CST (midnight)
import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it, vi } from 'vitest';
import { type CronSchedule, nextFireTime, nextFireTimes, parseCron, prevFireTime } from './index';

function sched(expr: string, tz: string): CronSchedule {
  const r = parseCron(expr, tz);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(expr)} to parse, got: ${r.error}`);
  return r.schedule;
}
const next = (expr: string, tz: string, after: string, n: number): string[] =>
  nextFireTimes(sched(expr, tz), new Date(after), n).map((d) => d.toISOString());
const prevN = (expr: string, tz: string, before: string, n: number): string[] => {
  const s = sched(expr, tz);
  const out: string[] = [];
  let d: Date | null = new Date(before);
  for (let i = 0; i < n && d !== null; i++) {
    d = prevFireTime(s, d);
    if (d !== null) out.push(d.toISOString());
  }
  return out;
};

// ─── Intl helpers used by the oracle (independent of the cron module) ──────────────────────────

const fmts = new Map<string, Intl.DateTimeFormat>();
/** Wall clock of instant ms in tz, as "local seconds" (the wall time read as if it were UTC). */
function wallOf(tz: string, ms: number): number {
  let f = fmts.get(tz);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    fmts.set(tz, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) / 1000;
}
const offsetOf = (tz: string, ms: number): number => wallOf(tz, ms) - Math.floor(ms / 1000);

interface Transition {
  at: number; // ms
  from: number; // offset seconds
  to: number;
}
function transitionsOf(tz: string, fromMs: number, toMs: number): Transition[] {
  const out: Transition[] = [];
  let a = fromMs;
  let oa = offsetOf(tz, a);
  for (let b = a + 3_600_000; b <= toMs; b += 3_600_000) {
    const ob = offsetOf(tz, b);
    if (ob !== oa) {
      let lo = a;
      let hi = b;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (offsetOf(tz, mid) === oa) lo = mid;
        else hi = mid;
      }
      out.push({ at: hi, from: oa, to: ob });
    }
    a = b;
    oa = ob;
  }
  return out;
}

/**
 * Brute-force fire times of a minute-resolution expression in [fromMs, toMs), scanning every
 * minute in chronological order. Wall-time matching is cron-parser's own (`includesDate` on an
 * expression evaluated in UTC, fed the wall time), the DST policy is applied literally:
 *  fixed:    a matching wall fires at its first occurrence only; matching walls skipped by a
 *            forward jump fire at wall - (offset before the jump);
 *  interval: every minute whose wall matches fires.
 */
function oracle(expr: string, tz: string, fixed: boolean, fromMs: number, toMs: number): string[] {
  const matcher = CronExpressionParser.parse(expr, { tz: 'UTC' });
  const matches = (wall: number): boolean => matcher.includesDate(new Date(wall * 1000));
  const seen = new Set<number>();
  const fires = new Set<number>();
  let prevWall = wallOf(tz, fromMs - 60_000);
  for (let t = fromMs; t < toMs; t += 60_000) {
    const w = wallOf(tz, t);
    if (fixed && w > prevWall + 60) {
      const offBefore = prevWall - (t - 60_000) / 1000;
      for (let g = prevWall + 60; g < w; g += 60) if (matches(g)) fires.add((g - offBefore) * 1000);
    }
    if (matches(w) && (!fixed || !seen.has(w))) fires.add(t);
    seen.add(w);
    prevWall = w;
  }
  return [...fires].sort((x, y) => x - y).map((ms) => new Date(ms).toISOString());
}

// ─── Tests ──────────────────────────────────────────────────────────────────────────────────────

describe('tzdata sanity (the transitions the exact tests below rely on)', () => {
  const y2025 = [Date.UTC(2025, 0, 1), Date.UTC(2026, 0, 1)] as const;
  const fmt = (t: Transition): string => `${new Date(t.at).toISOString()} ${t.from / 60}->${t.to / 60}`;
  it.each([
    ['America/New_York', ['2025-03-09T07:00:00.000Z -300->-240', '2025-11-02T06:00:00.000Z -240->-300']],
    ['Australia/Sydney', ['2025-04-05T16:00:00.000Z 660->600', '2025-10-04T16:00:00.000Z 600->660']],
    ['Australia/Lord_Howe', ['2025-04-05T15:00:00.000Z 660->630', '2025-10-04T15:30:00.000Z 630->660']],
    ['America/Santiago', ['2025-04-06T03:00:00.000Z -180->-240', '2025-09-07T04:00:00.000Z -240->-180']],
    ['America/Havana', ['2025-03-09T05:00:00.000Z -300->-240', '2025-11-02T05:00:00.000Z -240->-300']],
  ])('%s', (tz, expected) => {
    expect(transitionsOf(tz, ...y2025).map(fmt)).toEqual(expected);
  });
});

describe('America/New_York (northern hemisphere)', () => {
  const tz = 'America/New_York';
  describe('spring forward 2025-03-09: 02:00-03:00 does not exist', () => {
    it('fixed 02:30 runs once, shifted forward by the gap: 03:30 EDT = 07:30Z', () => {
      expect(next('30 2 * * *', tz, '2025-03-08T12:00:00Z', 3)).toEqual([
        '2025-03-09T07:30:00.000Z',
        '2025-03-10T06:30:00.000Z',
        '2025-03-11T06:30:00.000Z',
      ]);
      // even when asked from inside the shifted hour (03:10 EDT)
      expect(next('30 2 * * *', tz, '2025-03-09T07:10:00Z', 1)).toEqual(['2025-03-09T07:30:00.000Z']);
      expect(prevN('30 2 * * *', tz, '2025-03-11T00:00:00Z', 3)).toEqual([
        '2025-03-10T06:30:00.000Z',
        '2025-03-09T07:30:00.000Z',
        '2025-03-08T07:30:00.000Z',
      ]);
    });
    it('fixed 02:00 -> 03:00 EDT; 02:00 and 03:00 together still fire once', () => {
      expect(next('0 2 * * *', tz, '2025-03-08T12:00:00Z', 2)).toEqual([
        '2025-03-09T07:00:00.000Z',
        '2025-03-10T06:00:00.000Z',
      ]);
      expect(next('0 2,3 * * *', tz, '2025-03-08T12:00:00Z', 3)).toEqual([
        '2025-03-09T07:00:00.000Z',
        '2025-03-10T06:00:00.000Z',
        '2025-03-10T07:00:00.000Z',
      ]);
    });
    it('fixed hour with a minute wildcard: every minute of the missing hour is shifted', () => {
      expect(next('*/20 2 * * *', tz, '2025-03-09T06:00:00Z', 4)).toEqual([
        '2025-03-09T07:00:00.000Z',
        '2025-03-09T07:20:00.000Z',
        '2025-03-09T07:40:00.000Z',
        '2025-03-10T06:00:00.000Z',
      ]);
    });
    it('hourly follows elapsed time: nothing for the missing hour', () => {
      expect(next('0 * * * *', tz, '2025-03-09T05:30:00Z', 3)).toEqual([
        '2025-03-09T06:00:00.000Z', // 01:00 EST
        '2025-03-09T07:00:00.000Z', // 03:00 EDT
        '2025-03-09T08:00:00.000Z',
      ]);
      expect(next('*/30 * * * *', tz, '2025-03-09T06:00:00Z', 3)).toEqual([
        '2025-03-09T06:30:00.000Z', // 01:30 EST
        '2025-03-09T07:00:00.000Z', // 03:00 EDT
        '2025-03-09T07:30:00.000Z',
      ]);
    });
    it('stepped hours follow elapsed time: 0 */2 has no 02:00 (and no substitute)', () => {
      expect(next('0 */2 * * *', tz, '2025-03-09T04:30:00Z', 3)).toEqual([
        '2025-03-09T05:00:00.000Z', // 00:00 EST
        '2025-03-09T08:00:00.000Z', // 04:00 EDT
        '2025-03-09T10:00:00.000Z', // 06:00 EDT
      ]);
    });
  });

  describe('fall back 2025-11-02: 01:00-02:00 happens twice', () => {
    it('fixed 01:30 runs once, at the first occurrence (05:30Z, not 06:30Z)', () => {
      expect(next('30 1 * * *', tz, '2025-11-01T12:00:00Z', 2)).toEqual([
        '2025-11-02T05:30:00.000Z',
        '2025-11-03T06:30:00.000Z',
      ]);
      // asked from between the two occurrences
      expect(next('30 1 * * *', tz, '2025-11-02T05:45:00Z', 1)).toEqual(['2025-11-03T06:30:00.000Z']);
      expect(prevN('30 1 * * *', tz, '2025-11-03T00:00:00Z', 2)).toEqual([
        '2025-11-02T05:30:00.000Z',
        '2025-11-01T05:30:00.000Z',
      ]);
    });
    it('fixed hour with a minute step: only the first pass', () => {
      expect(next('*/20 1 * * *', tz, '2025-11-02T04:50:00Z', 4)).toEqual([
        '2025-11-02T05:00:00.000Z',
        '2025-11-02T05:20:00.000Z',
        '2025-11-02T05:40:00.000Z',
        '2025-11-03T06:00:00.000Z',
      ]);
    });
    it('hourly fires at 01:00 EDT and again at 01:00 EST', () => {
      expect(next('0 * * * *', tz, '2025-11-02T03:30:00Z', 4)).toEqual([
        '2025-11-02T04:00:00.000Z', // 00:00 EDT
        '2025-11-02T05:00:00.000Z', // 01:00 EDT
        '2025-11-02T06:00:00.000Z', // 01:00 EST
        '2025-11-02T07:00:00.000Z', // 02:00 EST
      ]);
      expect(prevN('0 * * * *', tz, '2025-11-02T07:30:00Z', 4)).toEqual([
        '2025-11-02T07:00:00.000Z',
        '2025-11-02T06:00:00.000Z',
        '2025-11-02T05:00:00.000Z',
        '2025-11-02T04:00:00.000Z',
      ]);
      expect(next('*/20 * * * *', tz, '2025-11-02T04:50:00Z', 7)).toEqual([
        '2025-11-02T05:00:00.000Z',
        '2025-11-02T05:20:00.000Z',
        '2025-11-02T05:40:00.000Z',
        '2025-11-02T06:00:00.000Z',
        '2025-11-02T06:20:00.000Z',
        '2025-11-02T06:40:00.000Z',
        '2025-11-02T07:00:00.000Z',
      ]);
    });
    it('stepped hours: 0 */2 is 00:00 EDT, 02:00 EST, 04:00 EST', () => {
      expect(next('0 */2 * * *', tz, '2025-11-02T03:30:00Z', 3)).toEqual([
        '2025-11-02T04:00:00.000Z',
        '2025-11-02T07:00:00.000Z',
        '2025-11-02T09:00:00.000Z',
      ]);
    });
    it('an hour field covering all 24 hours counts as a wildcard', () => {
      expect(next('0 0-23 * * *', tz, '2025-11-02T04:30:00Z', 2)).toEqual([
        '2025-11-02T05:00:00.000Z',
        '2025-11-02T06:00:00.000Z',
      ]);
    });
  });
});

describe('Australia/Sydney (southern hemisphere)', () => {
  const tz = 'Australia/Sydney';
  it('DST ends 2025-04-06 (first Sunday of April): fixed 02:30 once, at 02:30 AEDT', () => {
    expect(next('30 2 * * *', tz, '2025-04-04T12:00:00Z', 3)).toEqual([
      '2025-04-04T15:30:00.000Z', // Apr 5 02:30 AEDT
      '2025-04-05T15:30:00.000Z', // Apr 6 02:30 AEDT (first occurrence; not 16:30Z)
      '2025-04-06T16:30:00.000Z', // Apr 7 02:30 AEST
    ]);
  });
  it('DST ends: hourly fires in both passes of 02:00', () => {
    expect(next('0 * * * *', tz, '2025-04-05T14:30:00Z', 3)).toEqual([
      '2025-04-05T15:00:00.000Z', // 02:00 AEDT
      '2025-04-05T16:00:00.000Z', // 02:00 AEST
      '2025-04-05T17:00:00.000Z', // 03:00 AEST
    ]);
  });
  it('DST starts 2025-10-05 (first Sunday of October): fixed 02:30 -> 03:30 AEDT', () => {
    expect(next('30 2 * * *', tz, '2025-10-04T00:00:00Z', 2)).toEqual([
      '2025-10-04T16:30:00.000Z',
      '2025-10-05T15:30:00.000Z',
    ]);
    expect(prevN('30 2 * * *', tz, '2025-10-06T00:00:00Z', 2)).toEqual([
      '2025-10-05T15:30:00.000Z',
      '2025-10-04T16:30:00.000Z',
    ]);
  });
  it('DST starts: hourly skips the missing 02:00', () => {
    expect(next('0 * * * *', tz, '2025-10-04T14:30:00Z', 3)).toEqual([
      '2025-10-04T15:00:00.000Z', // 01:00 AEST
      '2025-10-04T16:00:00.000Z', // 03:00 AEDT
      '2025-10-04T17:00:00.000Z',
    ]);
  });
});

describe('Australia/Lord_Howe (30-minute DST shift)', () => {
  const tz = 'Australia/Lord_Howe';
  it('gap 02:00-02:30 on 2025-10-05: fixed 02:15 shifts by 30 minutes to 02:45 (+11)', () => {
    expect(next('15 2 * * *', tz, '2025-10-04T00:00:00Z', 2)).toEqual([
      '2025-10-04T15:45:00.000Z',
      '2025-10-05T15:15:00.000Z',
    ]);
    expect(next('*/15 2 * * *', tz, '2025-10-04T15:00:00Z', 3)).toEqual([
      '2025-10-04T15:30:00.000Z', // 02:00 -> 02:30 and 02:30 itself: once
      '2025-10-04T15:45:00.000Z', // 02:15 -> 02:45 and 02:45 itself: once
      '2025-10-05T15:00:00.000Z',
    ]);
  });
  it('gap: interval schedules skip the missing half hour only', () => {
    expect(next('0 * * * *', tz, '2025-10-04T14:00:00Z', 3)).toEqual([
      '2025-10-04T14:30:00.000Z', // 01:00 +1030
      '2025-10-04T16:00:00.000Z', // 03:00 +11 (02:00 does not exist)
      '2025-10-04T17:00:00.000Z',
    ]);
    expect(next('30 * * * *', tz, '2025-10-04T14:00:00Z', 3)).toEqual([
      '2025-10-04T15:00:00.000Z', // 01:30 +1030
      '2025-10-04T15:30:00.000Z', // 02:30 +11 exists
      '2025-10-04T16:30:00.000Z',
    ]);
  });
  it('overlap 01:30-02:00 on 2025-04-06: fixed 01:45 once at +11, interval twice', () => {
    expect(next('45 1 * * *', tz, '2025-04-05T12:00:00Z', 2)).toEqual([
      '2025-04-05T14:45:00.000Z',
      '2025-04-06T15:15:00.000Z',
    ]);
    expect(next('*/15 * * * *', tz, '2025-04-05T14:20:00Z', 6)).toEqual([
      '2025-04-05T14:30:00.000Z', // 01:30 +11
      '2025-04-05T14:45:00.000Z', // 01:45 +11
      '2025-04-05T15:00:00.000Z', // 01:30 +1030
      '2025-04-05T15:15:00.000Z', // 01:45 +1030
      '2025-04-05T15:30:00.000Z', // 02:00 +1030
      '2025-04-05T15:45:00.000Z',
    ]);
  });
});

describe('transitions at midnight', () => {
  it('America/Santiago 2025-09-07: midnight does not exist -> @daily fires at 01:00 -03', () => {
    const tz = 'America/Santiago';
    expect(next('0 0 * * *', tz, '2025-09-05T12:00:00Z', 3)).toEqual([
      '2025-09-06T04:00:00.000Z', // Sep 6 00:00 -04
      '2025-09-07T04:00:00.000Z', // Sep 7 00:00 missing -> 01:00 -03
      '2025-09-08T03:00:00.000Z', // Sep 8 00:00 -03
    ]);
    expect(prevN('@daily', tz, '2025-09-08T12:00:00Z', 3)).toEqual([
      '2025-09-08T03:00:00.000Z',
      '2025-09-07T04:00:00.000Z',
      '2025-09-06T04:00:00.000Z',
    ]);
    // the shifted fire keeps the weekday of the missing wall time (Sunday 7 Sep)
    expect(next('0 0 * * SUN', tz, '2025-09-01T00:00:00Z', 1)).toEqual(['2025-09-07T04:00:00.000Z']);
    // hourly: 23:00 -04 then 01:00 -03
    expect(next('0 * * * *', tz, '2025-09-07T02:30:00Z', 3)).toEqual([
      '2025-09-07T03:00:00.000Z',
      '2025-09-07T04:00:00.000Z',
      '2025-09-07T05:00:00.000Z',
    ]);
  });
  it('America/Santiago 2025-04-05: 23:00-24:00 happens twice', () => {
    const tz = 'America/Santiago';
    expect(next('30 23 * * *', tz, '2025-04-05T12:00:00Z', 2)).toEqual([
      '2025-04-06T02:30:00.000Z',
      '2025-04-07T03:30:00.000Z',
    ]);
    expect(next('0,30 * * * *', tz, '2025-04-06T01:45:00Z', 5)).toEqual([
      '2025-04-06T02:00:00.000Z', // 23:00 -03
      '2025-04-06T02:30:00.000Z',
      '2025-04-06T03:00:00.000Z', // 23:00 -04
      '2025-04-06T03:30:00.000Z',
      '2025-04-06T04:00:00.000Z', // Apr 6 00:00 -04
    ]);
  });
  it('America/Havana 2025-11-02: 00:00-01:00 happens twice -> @daily once, at the first midnight', () => {
    const tz = 'America/Havana';
    expect(next('@daily', tz, '2025-11-01T12:00:00Z', 2)).toEqual([
      '2025-11-02T04:00:00.000Z',
      '2025-11-03T05:00:00.000Z',
    ]);
    expect(next('@hourly', tz, '2025-11-02T03:30:00Z', 3)).toEqual([
      '2025-11-02T04:00:00.000Z', // 00:00 CDT
      '2025-11-02T05:00:00.000Z', // 00:00 CST
      '2025-11-02T06:00:00.000Z', // 01:00 CST
    ]);
  });
  it('America/Havana 2025-03-09: midnight does not exist -> @daily at 01:00 CDT', () => {
    expect(next('@daily', 'America/Havana', '2025-03-08T12:00:00Z', 2)).toEqual([
      '2025-03-09T05:00:00.000Z',
      '2025-03-10T04:00:00.000Z',
    ]);
  });
});

// Exhaustive check around every 2025-2026 transition of several zones against the brute-force
// oracle above (which shares no code with the cron module), for next (forward walk) and prev (backward).
describe('brute-force oracle around every transition of 2025-2026', () => {
  const zones = [
    'America/New_York',
    'Australia/Sydney',
    'Australia/Lord_Howe',
    'America/Santiago',
    'America/Havana',
    'Pacific/Chatham',
    'Europe/London',
  ];
  const cases: [string, boolean][] = [
    ['30 2 * * *', true],
    ['0 1 * * *', true],
    ['*/15 1 * * *', true],
    ['0,30 0-3 * * *', true],
    ['15 2,3 * * *', true],
    ['0 0 * * *', true],
    ['45 23 * * *', true],
    ['0 0 * * 0', true],
    ['50 1 * * 1-5', true],
    ['0 * * * *', false],
    ['*/15 * * * *', false],
    ['0 */2 * * *', false],
    ['30 1-23/2 * * *', false],
    ['0 0-23 * * *', false],
    ['5 * * * 0', false],
  ];
  const HOUR = 3_600_000;
  it.each(zones)('%s', (tz) => {
    const transitions = transitionsOf(tz, Date.UTC(2025, 0, 1), Date.UTC(2027, 0, 1));
    expect(transitions.length).toBeGreaterThanOrEqual(4);
    for (const tr of transitions) {
      const lo = tr.at - 4 * HOUR;
      const hi = tr.at + 4 * HOUR;
      for (const [expr, fixed] of cases) {
        const want = oracle(expr, tz, fixed, tr.at - 5 * HOUR, tr.at + 5 * HOUR).filter((s) => {
          const ms = Date.parse(s);
          return ms >= lo && ms < hi;
        });
        const s = sched(expr, tz);
        const forward: string[] = [];
        for (let d = nextFireTime(s, new Date(lo - 1)); d !== null && d.getTime() < hi; d = nextFireTime(s, d)) {
          forward.push(d.toISOString());
        }
        const label = `${expr} in ${tz} around ${new Date(tr.at).toISOString()}`;
        expect(forward, label).toEqual(want);
        const backward: string[] = [];
        for (let d = prevFireTime(s, new Date(hi)); d !== null && d.getTime() >= lo; d = prevFireTime(s, d)) {
          backward.push(d.toISOString());
        }
        expect(backward.reverse(), label).toEqual(want);
      }
    }
  });
});

describe('next/prev consistency at random instants', () => {
  let seed = 424242;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const exprs = [
    '30 2 * * *',
    '0 * * * *',
    '*/7 * * * *',
    '0 */2 * * *',
    '15 1 * * 0',
    '0 0 29 2 *',
    '0 0 13 * 5',
    '*/20 30 2 * * *',
  ];
  const zones = [
    'UTC',
    'America/New_York',
    'Australia/Sydney',
    'Australia/Lord_Howe',
    'America/Santiago',
    'America/Havana',
  ];
  it.each(zones)('%s', (tz) => {
    // half uniformly over 2025-2027, half within +-3h of a transition
    const transitions = transitionsOf(tz, Date.UTC(2025, 0, 1), Date.UTC(2028, 0, 1)).map((t) => t.at);
    for (const expr of exprs) {
      const s = sched(expr, tz);
      for (let i = 0; i < 40; i++) {
        const base =
          i % 2 === 0 || transitions.length === 0
            ? Date.UTC(2025, 0, 1) + rnd() * 3 * 365 * 86_400_000
            : transitions[Math.floor(rnd() * transitions.length)]! + (rnd() - 0.5) * 6 * 3_600_000;
        const t = Math.floor(base / 1000) * 1000 + 1 + Math.floor(rnd() * 998); // never a whole second
        const label = `${expr} ${tz} t=${new Date(t).toISOString()}`;
        const p = prevFireTime(s, new Date(t));
        const n = nextFireTime(s, new Date(t));
        expect(p, label).not.toBeNull();
        expect(n, label).not.toBeNull();
        const pm = p!.getTime();
        const nm = n!.getTime();
        expect(pm < t && t < nm, label).toBe(true);
        expect(nextFireTime(s, new Date(pm - 1))!.getTime(), label).toBe(pm);
        expect(prevFireTime(s, new Date(nm + 1))!.getTime(), label).toBe(nm);
        expect(nextFireTime(s, p!)!.getTime(), label).toBe(nm); // nothing fires in (p, t]
        expect(prevFireTime(s, n!)!.getTime(), label).toBe(pm); // nothing fires in [t, n)
      }
    }
  });
});

describe('host TZ independence', () => {
  // The whole suite is also run under TZ=UTC, TZ=America/New_York and TZ=Australia/Sydney; this
  // test additionally switches the process TZ at runtime and re-imports a fresh copy of the module
  // (so no cache computed under another TZ can hide a dependency).
  const battery = async (): Promise<string[]> => {
    vi.resetModules();
    const m = await import('./index');
    const s = (e: string, tz: string): CronSchedule => {
      const r = m.parseCron(e, tz);
      if (!r.ok) throw new Error(r.error);
      return r.schedule;
    };
    const out: string[] = [];
    const add = (d: Date | null): void => {
      out.push(d === null ? 'null' : d.toISOString());
    };
    add(m.nextFireTime(s('30 2 * * *', 'America/New_York'), new Date('2025-03-08T12:00:00Z')));
    add(m.nextFireTime(s('30 1 * * *', 'America/New_York'), new Date('2025-11-01T12:00:00Z')));
    add(m.prevFireTime(s('30 1 * * *', 'America/New_York'), new Date('2025-11-03T00:00:00Z')));
    add(m.nextFireTime(s('30 2 * * *', 'Australia/Sydney'), new Date('2025-10-04T00:00:00Z')));
    add(m.nextFireTime(s('15 2 * * *', 'Australia/Lord_Howe'), new Date('2025-10-04T00:00:00Z')));
    add(m.nextFireTime(s('@daily', 'America/Santiago'), new Date('2025-09-06T12:00:00Z')));
    add(m.nextFireTime(s('@daily', 'UTC'), new Date('2025-03-09T03:00:00Z')));
    add(m.nextFireTime(s('0 0 * * 1', 'UTC'), new Date('2025-03-08T23:30:00Z')));
    add(m.nextFireTime(s('0 0 29 2 *', 'UTC'), new Date('2025-03-01T00:00:00Z')));
    for (const d of m.nextFireTimes(s('0 * * * *', 'America/New_York'), new Date('2025-11-02T04:30:00Z'), 3)) add(d);
    return out;
  };
  it('gives identical instants under five different process time zones', async () => {
    const original = process.env.TZ;
    const results = new Map<string, string[]>();
    const hostOffsets = new Set<number>();
    try {
      for (const host of ['UTC', 'America/New_York', 'Australia/Sydney', 'Asia/Kathmandu', 'Pacific/Chatham']) {
        process.env.TZ = host;
        hostOffsets.add(new Date(2025, 0, 1).getTimezoneOffset());
        results.set(host, await battery());
      }
    } finally {
      if (original === undefined) delete process.env.TZ;
      else process.env.TZ = original;
      vi.resetModules();
    }
    expect(hostOffsets.size).toBe(5); // the host TZ really changed between runs
    const expected = [
      '2025-03-09T07:30:00.000Z',
      '2025-11-02T05:30:00.000Z',
      '2025-11-02T05:30:00.000Z',
      '2025-10-04T16:30:00.000Z',
      '2025-10-04T15:45:00.000Z',
      '2025-09-07T04:00:00.000Z',
      '2025-03-10T00:00:00.000Z',
      '2025-03-10T00:00:00.000Z',
      '2028-02-29T00:00:00.000Z',
      '2025-11-02T05:00:00.000Z',
      '2025-11-02T06:00:00.000Z',
      '2025-11-02T07:00:00.000Z',
    ];
    for (const [host, got] of results) expect(got, `host TZ ${host}`).toEqual(expected);
  });
});

// What cron-parser 5.10 does natively, pinned so that an upgrade that changes it is noticed.
// These are the reasons fire times are computed in the cron module rather than with cron-parser's iterator.
describe('cron-parser findings', () => {
  const take = (expr: string, tz: string, from: string, n: number, reverse = false): string[] => {
    const it = CronExpressionParser.parse(expr, { tz, currentDate: new Date(from) });
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push((reverse ? it.prev() : it.next()).toDate().toISOString());
    return out;
  };
  const NY = 'America/New_York';
  it('next() shifts a gap time forward (agrees with our policy)', () => {
    expect(take('30 2 * * *', NY, '2025-03-08T12:00:00Z', 2)).toEqual([
      '2025-03-09T07:30:00.000Z',
      '2025-03-10T06:30:00.000Z',
    ]);
  });
  it('prev() skips the shifted gap slot entirely (03-10 -> 03-08): inconsistent with next()', () => {
    expect(take('30 2 * * *', NY, '2025-03-11T12:00:00Z', 3, true)).toEqual([
      '2025-03-11T06:30:00.000Z',
      '2025-03-10T06:30:00.000Z',
      '2025-03-08T07:30:00.000Z',
    ]);
  });
  it('next() fires an overlap time once, at the first occurrence (agrees with our policy)', () => {
    expect(take('30 1 * * *', NY, '2025-11-01T12:00:00Z', 2)).toEqual([
      '2025-11-02T05:30:00.000Z',
      '2025-11-03T06:30:00.000Z',
    ]);
  });
  it('prev() returns BOTH occurrences of an overlap time: inconsistent with next()', () => {
    expect(take('30 1 * * *', NY, '2025-11-03T12:00:00Z', 3, true)).toEqual([
      '2025-11-03T06:30:00.000Z',
      '2025-11-02T06:30:00.000Z',
      '2025-11-02T05:30:00.000Z',
    ]);
  });
  it('stepped hours get a spurious fire at the end of the gap (03:00 EDT for 0 */2)', () => {
    expect(take('0 */2 * * *', NY, '2025-03-09T04:30:00Z', 3)).toEqual([
      '2025-03-09T05:00:00.000Z',
      '2025-03-09T07:00:00.000Z', // 03:00 EDT: hour 3 is not in */2
      '2025-03-09T08:00:00.000Z',
    ]);
  });
  it('wildcard hours fire in both passes of an overlap (agrees with our policy)', () => {
    expect(take('0 * * * *', NY, '2025-11-02T04:30:00Z', 2)).toEqual([
      '2025-11-02T05:00:00.000Z',
      '2025-11-02T06:00:00.000Z',
    ]);
  });
  it('combines day-of-month and day-of-week with OR when both are restricted (non-strict default)', () => {
    expect(take('0 0 13 * 5', 'UTC', '2025-01-01T00:00:00Z', 3)).toEqual([
      '2025-01-03T00:00:00.000Z',
      '2025-01-10T00:00:00.000Z',
      '2025-01-13T00:00:00.000Z',
    ]);
    expect(() => CronExpressionParser.parse('0 0 0 13 * 5', { strict: true })).toThrow(/dayOfMonth and dayOfWeek/);
  });
  it('parsing quirks we guard against', () => {
    // overlapping list items are rejected (every other cron accepts them)
    expect(() => CronExpressionParser.parse('0,*/15 * * * *')).toThrow(/duplicate values/);
    expect(() => CronExpressionParser.parse('0 0 * * 0,7')).toThrow(/duplicate values/);
    // too few fields are padded instead of rejected; empty means "every minute"
    expect(CronExpressionParser.parse('* * * *').stringify(true)).toBe('0 * * * * *');
    expect(CronExpressionParser.parse('').stringify(true)).toBe('0 * * * * *');
    // impossible days are rejected, with a terse message
    expect(() => CronExpressionParser.parse('0 0 30 2 *')).toThrow('Invalid explicit day of month definition');
    // no @midnight
    expect(() => CronExpressionParser.parse('@midnight')).toThrow();
  });
});
