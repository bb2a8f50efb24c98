// Parsing, validation and calendar semantics of the cron module (no DST here: see cron.dst.test.ts).
// Every expectation is an exact instant; the suite is meant to pass under any host TZ
// (it is run under TZ=UTC, TZ=America/New_York and TZ=Australia/Sydney).
import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import {
  type CronSchedule,
  hasSeconds,
  isValidTimeZone,
  nextFireTime,
  nextFireTimes,
  parseCron,
  prevFireTime,
} from './index';

function sched(expr: string, tz?: string): CronSchedule {
  const r = parseCron(expr, tz);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(expr)} to parse, got: ${r.error}`);
  return r.schedule;
}
function errorOf(expr: unknown, tz?: unknown): string {
  const r = parseCron(expr as string, tz as string | undefined);
  if (r.ok) throw new Error(`expected ${JSON.stringify(expr)} to be rejected`);
  return r.error;
}
const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
const next = (expr: string, after: string, n = 1, tz?: string): string[] =>
  nextFireTimes(sched(expr, tz), new Date(after), n).map((d) => d.toISOString());
const prev = (expr: string, before: string, tz?: string): string | null =>
  iso(prevFireTime(sched(expr, tz), new Date(before)));

describe('parseCron: accepted syntax', () => {
  it('returns the normalised expression and the zone as given (default UTC)', () => {
    const s = sched('  */5   *  * * *\t');
    expect(s.expr).toBe('*/5 * * * *');
    expect(s.timezone).toBe('UTC');
    expect(sched('0 9 * * *', 'America/New_York').timezone).toBe('America/New_York');
  });

  it('caches: the same input yields the same schedule object', () => {
    expect(parseCron('7 7 * * *', 'Europe/Paris')).toBe(parseCron('7 7 * * *', 'Europe/Paris'));
  });

  it('macros', () => {
    const after = '2025-01-15T10:20:30Z'; // a Wednesday
    expect(next('@yearly', after)).toEqual(['2026-01-01T00:00:00.000Z']);
    expect(next('@annually', after)).toEqual(['2026-01-01T00:00:00.000Z']);
    expect(next('@monthly', after)).toEqual(['2025-02-01T00:00:00.000Z']);
    expect(next('@weekly', after)).toEqual(['2025-01-19T00:00:00.000Z']);
    expect(next('@daily', after)).toEqual(['2025-01-16T00:00:00.000Z']);
    expect(next('@midnight', after)).toEqual(['2025-01-16T00:00:00.000Z']);
    expect(next('@hourly', after, 2)).toEqual(['2025-01-15T11:00:00.000Z', '2025-01-15T12:00:00.000Z']);
    expect(next('@DAILY', after)).toEqual(['2025-01-16T00:00:00.000Z']);
    expect(hasSeconds(sched('@hourly'))).toBe(false);
  });

  it('month and weekday names, case-insensitive, in lists and ranges', () => {
    expect(next('0 9 * JAN,jul MON-fri', '2025-01-30T12:00:00Z', 3)).toEqual([
      '2025-01-31T09:00:00.000Z',
      '2025-07-01T09:00:00.000Z',
      '2025-07-02T09:00:00.000Z',
    ]);
    expect(next('0 0 1 feb-Apr *', '2025-01-01T00:00:00Z', 4)).toEqual([
      '2025-02-01T00:00:00.000Z',
      '2025-03-01T00:00:00.000Z',
      '2025-04-01T00:00:00.000Z',
      '2026-02-01T00:00:00.000Z',
    ]);
  });

  it('steps, ranges with steps, value/step and lists', () => {
    expect(next('10-50/20 */6 * * *', '2025-01-01T00:00:00Z', 4)).toEqual([
      '2025-01-01T00:10:00.000Z',
      '2025-01-01T00:30:00.000Z',
      '2025-01-01T00:50:00.000Z',
      '2025-01-01T06:10:00.000Z',
    ]);
    expect(next('5/20 * * * *', '2025-01-01T00:00:00Z', 4)).toEqual([
      '2025-01-01T00:05:00.000Z',
      '2025-01-01T00:25:00.000Z',
      '2025-01-01T00:45:00.000Z',
      '2025-01-01T01:05:00.000Z',
    ]);
    // Friday 16:30 -> Friday 17:00, then Monday 09:00
    expect(next('0 9-17 * * 1-5', '2025-01-03T16:30:00Z', 3)).toEqual([
      '2025-01-03T17:00:00.000Z',
      '2025-01-06T09:00:00.000Z',
      '2025-01-06T10:00:00.000Z',
    ]);
    expect(next('0 0 1,15 * *', '2025-01-01T00:00:00Z', 3)).toEqual([
      '2025-01-15T00:00:00.000Z',
      '2025-02-01T00:00:00.000Z',
      '2025-02-15T00:00:00.000Z',
    ]);
  });

  it('overlapping list items are fine (cron-parser alone rejects them as duplicates)', () => {
    expect(next('0,*/15 * * * *', '2025-01-01T00:00:00Z', 4)).toEqual([
      '2025-01-01T00:15:00.000Z',
      '2025-01-01T00:30:00.000Z',
      '2025-01-01T00:45:00.000Z',
      '2025-01-01T01:00:00.000Z',
    ]);
    expect(next('0 8-10,9 * * *', '2025-01-01T00:00:00Z', 3)).toEqual([
      '2025-01-01T08:00:00.000Z',
      '2025-01-01T09:00:00.000Z',
      '2025-01-01T10:00:00.000Z',
    ]);
  });

  it('day-of-week 0 and 7 are both Sunday; 5-7 is Fri, Sat, Sun', () => {
    expect(next('0 0 * * 0,7', '2025-01-01T00:00:00Z', 2)).toEqual([
      '2025-01-05T00:00:00.000Z',
      '2025-01-12T00:00:00.000Z',
    ]);
    expect(next('0 0 * * 7', '2025-01-01T00:00:00Z', 1)).toEqual(['2025-01-05T00:00:00.000Z']);
    expect(next('0 0 * * 5-7', '2025-01-01T00:00:00Z', 4)).toEqual([
      '2025-01-03T00:00:00.000Z',
      '2025-01-04T00:00:00.000Z',
      '2025-01-05T00:00:00.000Z',
      '2025-01-10T00:00:00.000Z',
    ]);
  });

  it('"?" is a synonym of "*" in the day fields', () => {
    expect(next('0 0 ? * 1', '2025-01-01T00:00:00Z', 2)).toEqual([
      '2025-01-06T00:00:00.000Z',
      '2025-01-13T00:00:00.000Z',
    ]);
    expect(next('0 0 1 * ?', '2025-01-01T00:00:00Z', 1)).toEqual(['2025-02-01T00:00:00.000Z']);
  });

  it('6 fields: leading seconds', () => {
    expect(next('*/10 * * * * *', '2025-01-01T00:00:05Z', 3)).toEqual([
      '2025-01-01T00:00:10.000Z',
      '2025-01-01T00:00:20.000Z',
      '2025-01-01T00:00:30.000Z',
    ]);
    expect(next('30 0 0 * * *', '2025-01-01T00:00:30Z', 1)).toEqual(['2025-01-02T00:00:30.000Z']);
    expect(next('15,45 * * * * *', '2025-01-01T00:00:15.500Z', 2)).toEqual([
      '2025-01-01T00:00:45.000Z',
      '2025-01-01T00:01:15.000Z',
    ]);
    expect(next('59 59 23 31 12 *', '2025-06-01T00:00:00Z', 1)).toEqual(['2025-12-31T23:59:59.000Z']);
    expect(prev('*/10 * * * * *', '2025-01-01T00:00:10Z')).toBe('2025-01-01T00:00:00.000Z');
    expect(prev('*/10 * * * * *', '2025-01-01T00:00:10.001Z')).toBe('2025-01-01T00:00:10.000Z');
    expect(hasSeconds(sched('0 0 12 * * *'))).toBe(true);
    expect(hasSeconds(sched('0 12 * * *'))).toBe(false);
  });
});

describe('strictly after / strictly before', () => {
  const s = () => sched('*/5 * * * *');
  it('a fire time equal to `after` is not returned', () => {
    expect(iso(nextFireTime(s(), new Date('2025-01-01T00:05:00.000Z')))).toBe('2025-01-01T00:10:00.000Z');
    expect(iso(nextFireTime(s(), new Date('2025-01-01T00:04:59.999Z')))).toBe('2025-01-01T00:05:00.000Z');
    expect(iso(nextFireTime(s(), new Date('2025-01-01T00:05:00.001Z')))).toBe('2025-01-01T00:10:00.000Z');
  });
  it('a fire time equal to `before` is not returned', () => {
    expect(iso(prevFireTime(s(), new Date('2025-01-01T00:05:00.000Z')))).toBe('2025-01-01T00:00:00.000Z');
    expect(iso(prevFireTime(s(), new Date('2025-01-01T00:05:00.001Z')))).toBe('2025-01-01T00:05:00.000Z');
    expect(iso(prevFireTime(s(), new Date('2025-01-01T00:04:59.999Z')))).toBe('2025-01-01T00:00:00.000Z');
  });
  it('nextFireTimes chains strictly', () => {
    expect(next('0 0 * * *', '2025-01-01T00:00:00Z', 3)).toEqual([
      '2025-01-02T00:00:00.000Z',
      '2025-01-03T00:00:00.000Z',
      '2025-01-04T00:00:00.000Z',
    ]);
  });
});

describe('day-of-month / day-of-week combination (Vixie rule)', () => {
  it('both restricted: a day matches when EITHER matches', () => {
    // the 13th (a Monday in Jan 2025) OR any Friday
    expect(next('0 0 13 * 5', '2025-01-01T00:00:00Z', 5)).toEqual([
      '2025-01-03T00:00:00.000Z',
      '2025-01-10T00:00:00.000Z',
      '2025-01-13T00:00:00.000Z',
      '2025-01-17T00:00:00.000Z',
      '2025-01-24T00:00:00.000Z',
    ]);
    // "1-7 * 1" is NOT "first Monday": it is days 1-7 plus every Monday
    expect(next('0 0 1-7 * 1', '2025-01-01T00:00:00Z', 7)).toEqual([
      '2025-01-02T00:00:00.000Z',
      '2025-01-03T00:00:00.000Z',
      '2025-01-04T00:00:00.000Z',
      '2025-01-05T00:00:00.000Z',
      '2025-01-06T00:00:00.000Z',
      '2025-01-07T00:00:00.000Z',
      '2025-01-13T00:00:00.000Z',
    ]);
    // a stepped day-of-month counts as restricted
    expect(next('0 0 */10 * 1', '2025-01-01T00:00:00Z', 5)).toEqual([
      '2025-01-06T00:00:00.000Z',
      '2025-01-11T00:00:00.000Z',
      '2025-01-13T00:00:00.000Z',
      '2025-01-20T00:00:00.000Z',
      '2025-01-21T00:00:00.000Z',
    ]);
  });
  it('only one restricted: that one applies', () => {
    expect(next('0 0 13 * *', '2025-01-01T00:00:00Z', 2)).toEqual([
      '2025-01-13T00:00:00.000Z',
      '2025-02-13T00:00:00.000Z',
    ]);
    expect(next('0 0 * * 5', '2025-01-01T00:00:00Z', 2)).toEqual([
      '2025-01-03T00:00:00.000Z',
      '2025-01-10T00:00:00.000Z',
    ]);
  });
  it('an impossible day-of-month is rescued by a restricted day-of-week', () => {
    expect(next('0 0 30 2 1', '2025-01-01T00:00:00Z', 2)).toEqual([
      '2025-02-03T00:00:00.000Z',
      '2025-02-10T00:00:00.000Z',
    ]);
  });
  it('is the same rule cron-parser 5 applies natively', () => {
    for (const expr of ['0 0 13 * 5', '0 0 1-7 * 1', '0 0 */10 * 1', '0 0 13 * *', '0 0 * * 5']) {
      const it = CronExpressionParser.parse(expr, { tz: 'UTC', currentDate: new Date('2025-01-01T00:00:00Z') });
      const theirs = it.take(10).map((d) => d.toISOString());
      expect(next(expr, '2025-01-01T00:00:00Z', 10), expr).toEqual(theirs);
    }
  });
});

describe('leap days and short months', () => {
  it('0 0 29 2 * is valid and fires only on 29 February', () => {
    expect(next('0 0 29 2 *', '2025-03-01T00:00:00Z', 2)).toEqual([
      '2028-02-29T00:00:00.000Z',
      '2032-02-29T00:00:00.000Z',
    ]);
    expect(prev('0 0 29 2 *', '2025-03-01T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
    expect(next('0 0 29 2 *', '2028-02-29T00:00:00Z', 1)).toEqual(['2032-02-29T00:00:00.000Z']);
  });
  it('2100 is not a leap year: the 8-year gap is inside the search bound', () => {
    expect(next('0 0 29 2 *', '2096-03-01T00:00:00Z', 1)).toEqual(['2104-02-29T00:00:00.000Z']);
    expect(prev('0 0 29 2 *', '2104-02-01T00:00:00Z')).toBe('2096-02-29T00:00:00.000Z');
  });
  it('day 31 skips the months that do not have it', () => {
    expect(next('0 0 31 * *', '2025-04-01T00:00:00Z', 6)).toEqual([
      '2025-05-31T00:00:00.000Z',
      '2025-07-31T00:00:00.000Z',
      '2025-08-31T00:00:00.000Z',
      '2025-10-31T00:00:00.000Z',
      '2025-12-31T00:00:00.000Z',
      '2026-01-31T00:00:00.000Z',
    ]);
    expect(prev('0 0 31 * *', '2025-05-01T00:00:00Z')).toBe('2025-03-31T00:00:00.000Z');
  });
  it('day 30 in February with another month is valid', () => {
    expect(next('0 0 30 2,3 *', '2025-01-01T00:00:00Z', 2)).toEqual([
      '2025-03-30T00:00:00.000Z',
      '2026-03-30T00:00:00.000Z',
    ]);
    expect(next('0 0 31 2,3 *', '2025-01-01T00:00:00Z', 1)).toEqual(['2025-03-31T00:00:00.000Z']);
  });
});

describe('parseCron: rejections (messages are shown to API users)', () => {
  it('wrong field count', () => {
    expect(errorOf('* * * *')).toBe(
      'Cron expression "* * * *" has 4 fields; expected 5 (minute hour day-of-month month day-of-week) or 6 (second minute hour day-of-month month day-of-week).',
    );
    expect(errorOf('0 0 0 * * * 2025')).toMatch(/^Cron expression "0 0 0 \* \* \* 2025" has 7 fields; expected 5/);
    expect(errorOf('*/5')).toMatch(/has 1 field; expected 5/);
  });
  it('empty and non-string input', () => {
    expect(errorOf('')).toBe('Cron expression is empty.');
    expect(errorOf('   \t ')).toBe('Cron expression is empty.');
    expect(errorOf(null)).toBe('Cron expression must be a string.');
    expect(errorOf(42)).toBe('Cron expression must be a string.');
    expect(errorOf('x'.repeat(2000))).toBe('Cron expression is too long (more than 1024 characters).');
  });
  it('out-of-range values name the field and the allowed range', () => {
    expect(errorOf('60 * * * *')).toBe(
      'Invalid minute field "60" in cron expression "60 * * * *": 60 is out of range (0-59).',
    );
    expect(errorOf('0 24 * * *')).toBe(
      'Invalid hour field "24" in cron expression "0 24 * * *": 24 is out of range (0-23).',
    );
    expect(errorOf('0 0 0 * *')).toBe(
      'Invalid day-of-month field "0" in cron expression "0 0 0 * *": 0 is out of range (1-31).',
    );
    expect(errorOf('0 0 32 * *')).toMatch(/day-of-month field "32".*32 is out of range \(1-31\)\.$/);
    expect(errorOf('0 0 1 13 *')).toBe(
      'Invalid month field "13" in cron expression "0 0 1 13 *": 13 is out of range (1-12).',
    );
    expect(errorOf('0 0 * * 8')).toBe(
      'Invalid day-of-week field "8" in cron expression "0 0 * * 8": 8 is out of range (0-7).',
    );
    expect(errorOf('60 0 0 * * *')).toMatch(/^Invalid second field "60".*60 is out of range \(0-59\)\.$/);
    expect(errorOf('0-60 * * * *')).toMatch(/minute field "0-60".*60 is out of range \(0-59\)/);
    expect(errorOf('99999999 * * * *')).toMatch(/99999999 is out of range \(0-59\)/);
  });
  it('garbage', () => {
    expect(errorOf('foo * * * *')).toBe(
      'Invalid minute field "foo" in cron expression "foo * * * *": "foo" is not a number.',
    );
    expect(errorOf('1.5 * * * *')).toMatch(/minute field "1.5".*"1.5" is not a number\./);
    expect(errorOf('-1 * * * *')).toMatch(/minute field "-1".*"-1" is missing a number\./);
    expect(errorOf('1- * * * *')).toMatch(/"1-" is missing a number\./);
    expect(errorOf('1,,2 * * * *')).toMatch(/minute field "1,,2".*it contains an empty list item\./);
    expect(errorOf('*/x * * * *')).toMatch(/step "x" in "\*\/x" is not a whole number\./);
    expect(errorOf('*/0 * * * *')).toMatch(/step in "\*\/0" must be at least 1\./);
    // A step larger than the field's number of values is refused, however large (no overflow, no wrap).
    expect(errorOf('*/99999999999999999999 * * * *')).toBe(
      'Invalid minute field "*/99999999999999999999" in cron expression "*/99999999999999999999 * * * *": ' +
        'step 99999999999999999999 in "*/99999999999999999999" is larger than the minute field\'s 60 values (at most 60).',
    );
    expect(errorOf('0 */25 * * *')).toMatch(/hour field .* larger than the hour field's 24 values \(at most 24\)\./);
    expect(errorOf('0 0 1/32 * *')).toMatch(/day-of-month field .* 31 values/);
    expect(errorOf('0 0 * */13 *')).toMatch(/month field .* 12 values/);
    expect(errorOf('0 0 * * */8')).toMatch(/day-of-week field .* 7 values/);
    expect(errorOf('*/61 * * * * *')).toMatch(/second field .* 60 values/);
    for (const ok of ['*/60 * * * *', '0 */24 * * *', '0 0 */31 * *', '0 0 * */12 *', '0 0 * * */7'])
      expect(parseCron(ok).ok, ok).toBe(true);
    expect(errorOf('1/2/3 * * * *')).toMatch(/"1\/2\/3" has more than one "\/"\./);
    expect(errorOf('1-2-3 * * * *')).toMatch(/"1-2-3" is not a valid range\./);
    expect(errorOf('5-2 * * * *')).toBe(
      'Invalid minute field "5-2" in cron expression "5-2 * * * *": range "5-2" goes backwards (its start is after its end).',
    );
    expect(errorOf('0 0 * * SAT-SUN')).toMatch(/range "SAT-SUN" goes backwards/);
    expect(errorOf('0 0 * JANUARY *')).toMatch(/"JANUARY" is not a valid month \(use JAN-DEC or 1-12\)\./);
    expect(errorOf('0 0 * * MONDAY')).toMatch(/"MONDAY" is not a valid day-of-week \(use SUN-SAT or 0-7\)\./);
    expect(errorOf('0 0 * * JAN')).toMatch(/"JAN" is not a valid day-of-week/);
    expect(errorOf('mon * * * *')).toMatch(/minute field "mon".*"mon" is not a number\./);
    expect(errorOf('? * * * *')).toMatch(/"\?" is only allowed in the day-of-month and day-of-week fields\./);
  });
  it('unsupported special characters are rejected, not misread', () => {
    const msg = 'the special characters L, W, # and H are not supported (use plain values, ranges, lists and steps).';
    expect(errorOf('0 0 L * *')).toBe(`Invalid day-of-month field "L" in cron expression "0 0 L * *": ${msg}`);
    expect(errorOf('0 0 15W * *')).toMatch(/day-of-month field "15W".*not supported/);
    expect(errorOf('0 0 * * 1#2')).toMatch(/day-of-week field "1#2".*not supported/);
    expect(errorOf('0 0 * * 5L')).toMatch(/day-of-week field "5L".*not supported/);
    expect(errorOf('H * * * *')).toMatch(/minute field "H".*not supported/);
    expect(errorOf('H(0-29)/5 * * * *')).toMatch(/minute field "H\(0-29\)\/5".*not supported/);
  });
  it('macros', () => {
    expect(errorOf('@reboot')).toBe('Cron macro "@reboot" is not supported: a job schedule must be time-based.');
    expect(errorOf('@every_5m')).toBe(
      'Unknown cron macro "@every_5m": supported macros are @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly.',
    );
    expect(errorOf('@daily 0')).toMatch(/a macro such as @daily must be used on its own\./);
  });
  it('expressions that can never fire', () => {
    expect(errorOf('0 0 30 2 *')).toBe('Cron expression "0 0 30 2 *" never fires: day 30 does not occur in February.');
    expect(errorOf('0 0 31 4,6,9,11 *')).toBe(
      'Cron expression "0 0 31 4,6,9,11 *" never fires: day 31 does not occur in April, June, September or November.',
    );
    expect(errorOf('0 0 30,31 feb *')).toBe(
      'Cron expression "0 0 30,31 feb *" never fires: days 30 and 31 do not occur in February.',
    );
    expect(errorOf('0 0 0 31 2,4 *')).toBe(
      'Cron expression "0 0 0 31 2,4 *" never fires: day 31 does not occur in February or April.',
    );
    expect(errorOf('0 0 30 2 ?')).toMatch(/never fires: day 30 does not occur in February\.$/);
  });
  it('time zones', () => {
    expect(errorOf('* * * * *', 'Mars/Base')).toBe(
      'Unknown time zone "Mars/Base": expected an IANA time zone name such as "UTC" or "America/New_York".',
    );
    expect(errorOf('* * * * *', '')).toMatch(/^Unknown time zone "":/);
    expect(errorOf('* * * * *', '+05:00')).toMatch(/^Unknown time zone "\+05:00":/);
    expect(errorOf('* * * * *', 42)).toMatch(/^Time zone must be a string/);
    expect(errorOf('* * * * *', 'A'.repeat(5000))).toBe(
      `Unknown time zone "${'A'.repeat(64)}…": expected an IANA time zone name such as "UTC" or "America/New_York".`,
    );
    // the zone is checked first
    expect(errorOf('0 0 30 2 *', 'Mars/Base')).toMatch(/^Unknown time zone "Mars\/Base"/);
  });
  it('never throws', () => {
    for (const bad of [
      undefined,
      {},
      [],
      Symbol.iterator,
      '\u0000',
      '* * * * *\u200b',
      '\u{1F600} * * * *',
      '0 0 * * *'.repeat(200),
    ]) {
      expect(() => parseCron(bad as unknown as string)).not.toThrow();
      expect(parseCron(bad as unknown as string).ok).toBe(false);
    }
  });
});

describe('isValidTimeZone', () => {
  it.each([
    ['UTC', true],
    ['Etc/GMT+5', true],
    ['America/New_York', true],
    ['Australia/Lord_Howe', true],
    ['US/Eastern', true], // tzdb backward link
    ['america/new_york', true], // Intl matches names case-insensitively
    ['Mars/Base', false],
    ['', false],
    [' UTC', false],
    ['America/New York', false],
    ['+05:00', false],
    ['Local', false],
  ])('%j -> %s', (tz, ok) => {
    expect(isValidTimeZone(tz)).toBe(ok);
  });
  it('rejects non-strings', () => {
    expect(isValidTimeZone(undefined as unknown as string)).toBe(false);
    expect(isValidTimeZone(null as unknown as string)).toBe(false);
  });
  it('Etc/GMT+5 is UTC-5 (POSIX sign inversion)', () => {
    expect(next('0 9 * * *', '2025-01-01T00:00:00Z', 1, 'Etc/GMT+5')).toEqual(['2025-01-01T14:00:00.000Z']);
  });
  it('a fixed-offset zone without DST: Asia/Kolkata (+05:30)', () => {
    expect(next('0 9 * * *', '2025-01-01T00:00:00Z', 2, 'Asia/Kolkata')).toEqual([
      '2025-01-01T03:30:00.000Z',
      '2025-01-02T03:30:00.000Z',
    ]);
  });
});

describe('API robustness', () => {
  it('accepts a structurally built schedule (e.g. read back from the database)', () => {
    const s: CronSchedule = { expr: '*/5 * * * *', timezone: 'America/New_York' };
    expect(iso(nextFireTime(s, new Date('2025-01-01T00:01:00Z')))).toBe('2025-01-01T00:05:00.000Z');
    expect(hasSeconds({ expr: '0 * * * * *', timezone: 'UTC' })).toBe(true);
  });
  it('throws a TypeError for an invalid hand-built schedule or an invalid Date', () => {
    expect(() => nextFireTime({ expr: '0 0 30 2 *', timezone: 'UTC' }, new Date())).toThrow(TypeError);
    expect(() => nextFireTime({ expr: '* * * * *', timezone: 'Mars/Base' }, new Date())).toThrow(/Unknown time zone/);
    expect(() => nextFireTime(sched('* * * * *'), new Date(Number.NaN))).toThrow(TypeError);
    expect(() => prevFireTime(sched('* * * * *'), 'yesterday' as unknown as Date)).toThrow(TypeError);
  });
  it('nextFireTimes count handling', () => {
    const s = sched('0 * * * *');
    const after = new Date('2025-01-01T00:00:00Z');
    expect(nextFireTimes(s, after, 0)).toEqual([]);
    expect(nextFireTimes(s, after, -3)).toEqual([]);
    expect(nextFireTimes(s, after, Number.NaN)).toEqual([]);
    expect(nextFireTimes(s, after, 2.7).map(iso)).toEqual(['2025-01-01T01:00:00.000Z', '2025-01-01T02:00:00.000Z']);
    expect(() => nextFireTimes(s, after, Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
  it('ends cleanly at the edges of the supported range instead of looping', () => {
    expect(nextFireTime(sched('* * * * *'), new Date('9999-12-31T23:59:30Z'))).toBeNull();
    expect(nextFireTime(sched('* * * * *'), new Date(8.64e15))).toBeNull();
    expect(prevFireTime(sched('* * * * *'), new Date('1700-01-01T00:00:00Z'))).toBeNull();
    expect(prevFireTime(sched('* * * * *'), new Date(-8.64e15))).toBeNull();
    expect(nextFireTimes(sched('0 0 1 1 *'), new Date('9990-06-01T00:00:00Z'), 50).map(iso)).toHaveLength(9);
  });
  it('returns fresh Date objects', () => {
    const s = sched('0 * * * *');
    const a = nextFireTime(s, new Date('2025-01-01T00:00:00Z'))!;
    a.setTime(0);
    expect(iso(nextFireTime(s, new Date('2025-01-01T00:00:00Z')))).toBe('2025-01-01T01:00:00.000Z');
  });
});

// Differential test against cron-parser's own iteration in UTC (no DST there, so both must agree
// exactly, for next and for prev): random 5/6-field expressions, random instants.
describe('agrees with cron-parser 5 in UTC', () => {
  let seed = 20250309;
  const rnd = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const ri = (a: number, b: number): number => a + Math.floor(rnd() * (b - a + 1));
  const field = (min: number, max: number, star: number): string => {
    if (rnd() < star) return '*';
    const items: string[] = [];
    for (let i = ri(1, 3); i > 0; i--) {
      const k = rnd();
      if (k < 0.4) items.push(String(ri(min, max)));
      else if (k < 0.7) {
        const a = ri(min, max);
        items.push(`${a}-${ri(a, max)}`);
      } else if (k < 0.85) items.push(`*/${ri(1, Math.max(1, max - min))}`);
      else {
        const a = ri(min, max);
        items.push(`${a}-${ri(a, max)}/${ri(1, 5)}`);
      }
    }
    return items.join(',');
  };

  it('for 400 random expressions x 4 random instants', () => {
    let compared = 0;
    for (let i = 0; i < 400; i++) {
      const parts = [field(0, 59, 0.2), field(0, 23, 0.5), field(1, 31, 0.6), field(1, 12, 0.7), field(0, 7, 0.6)];
      if (rnd() < 0.3) parts.unshift(field(0, 59, 0.3));
      const expr = parts.join(' ');
      let cpOk = true;
      try {
        CronExpressionParser.parse(expr);
      } catch {
        cpOk = false; // e.g. overlapping list items, or never fires
      }
      const r = parseCron(expr);
      if (!cpOk) continue;
      expect(r.ok, `${expr}: ${r.ok ? '' : r.error}`).toBe(true);
      if (!r.ok) continue;
      for (let j = 0; j < 4; j++) {
        const t = new Date(Date.UTC(2000, 0, 1) + Math.floor(rnd() * 40 * 365 * 86_400_000));
        const it = CronExpressionParser.parse(expr, { tz: 'UTC', currentDate: t });
        const theirsNext = it.next().toISOString();
        it.reset(t);
        const theirsPrev = it.prev().toISOString();
        expect(iso(nextFireTime(r.schedule, t)), `next ${expr} after ${t.toISOString()}`).toBe(theirsNext);
        expect(iso(prevFireTime(r.schedule, t)), `prev ${expr} before ${t.toISOString()}`).toBe(theirsPrev);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(600);
  });
});
