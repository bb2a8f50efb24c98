/**
 * @module dashboard/cron-words — cron expressions in words ("every 5 minutes", "at 02:30 every day", "every 15
 * minutes from 09:00 to 17:45 on weekdays"). Only shapes it fully understands are described; anything else returns
 * null and the page shows the expression alone. Assumes a valid expression (the scheduler's parser has accepted it).
 */

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
/** Beyond this many fire times a day (or minutes an hour), a list in words helps nobody. */
const MAX_LISTED = 6;

const STEP = /^\*\/(\d{1,2})$/;
const any = (f: string) => f === '*' || f === '?';
const pad = (n: number) => String(n).padStart(2, '0');
const hm = (h: number, m: number) => `${pad(h)}:${pad(m)}`;

/** "a", "a and b", "a, b and c". */
function list(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** One list item of a field: `*`, `N`, `A-B`, each with an optional `/S` (`N/S` runs to the field's maximum). */
interface Item {
  start: number;
  end: number;
  step: number;
  star: boolean;
}

function items(field: string, min: number, max: number, names: string[] = [], base = min): Item[] | null {
  const value = (token: string) =>
    /^\d{1,2}$/.test(token) ? Number(token) : names.includes(token) ? names.indexOf(token) + base : NaN;
  const out: Item[] = [];
  for (const part of field.toUpperCase().split(',')) {
    const m = /^(\*|\?|\d{1,2}|[A-Z]{3})(?:-(\d{1,2}|[A-Z]{3}))?(?:\/(\d{1,2}))?$/.exec(part);
    if (!m) return null;
    const star = m[1] === '*' || m[1] === '?';
    if (star && m[2]) return null;
    const start = star ? min : value(m[1]!);
    const end = star ? max : m[2] ? value(m[2]) : m[3] ? max : start;
    const step = m[3] ? Number(m[3]) : 1;
    if (!(start >= min && end <= max && start <= end && step >= 1)) return null;
    out.push({ start, end, step, star });
  }
  return out;
}

/** Every value the items select, ascending, without repeats. */
function expand(list: Item[], fold = (n: number) => n): number[] {
  const set = new Set<number>();
  for (const i of list) for (let n = i.start; n <= i.end; n += i.step) set.add(fold(n));
  return [...set].sort((a, b) => a - b);
}

/** A single stepped or ranged item as a run (`*\/15` → 0..45 by 15); null for plain values and lists. */
function run(list: Item[], max: number): { from: number; to: number; step: number; whole: boolean } | null {
  if (list.length !== 1) return null;
  const [i] = list as [Item];
  if (i.start === i.end) return null;
  const to = i.start + Math.floor((i.end - i.start) / i.step) * i.step;
  return { from: i.start, to, step: i.step, whole: i.start === 0 && to + i.step === max + 1 };
}

/** "Monday", "Tuesday to Thursday", "on weekdays"; null for shapes with no plain wording. */
function weekdays(field: string): string | null {
  const parsed = items(field, 0, 7, DAY_NAMES, 0);
  if (!parsed) return null;
  const days = expand(parsed, (d) => d % 7);
  if (days.length === 7) return 'every day';
  if (days.join() === '1,2,3,4,5') return 'on weekdays';
  if (days.join() === '0,6') return 'on weekends';
  const parts: string[] = [];
  for (const i of parsed) {
    if (i.start === i.end) parts.push(DAYS[i.start % 7]!);
    else if (i.step === 1 && !i.star) parts.push(`${DAYS[i.start % 7]} to ${DAYS[i.end % 7]}`);
    else return null;
  }
  return parts.length === 1 && parsed[0]!.start !== parsed[0]!.end ? parts[0]! : `on ${list(parts)}`;
}

/** Days of the month: "1st", "1st and 15th", "1st to 7th". */
function monthDays(field: string): { text: string; plain: number[] | null } | null {
  const parsed = items(field, 1, 31);
  if (!parsed) return null;
  const r = run(parsed, 31);
  if (r && r.step === 1) return { text: `${ordinal(r.from)} to ${ordinal(r.to)}`, plain: null };
  const days = expand(parsed);
  return days.length <= 5 ? { text: list(days.map(ordinal)), plain: days } : null;
}

/** Months: ["in", "July"], ["from", "June to August"]. */
function months(field: string): { values: number[]; text: string; range: boolean } | null {
  const parsed = items(field, 1, 12, MONTH_NAMES, 1);
  if (!parsed) return null;
  const values = expand(parsed);
  const r = run(parsed, 12);
  if (r && r.step === 1) return { values, text: `${MONTHS[r.from - 1]} to ${MONTHS[r.to - 1]}`, range: true };
  return { values, text: list(values.map((m) => MONTHS[m - 1]!)), range: false };
}

/** The day part: "every day", "on weekdays", "on the 1st of every month", "on 1 January", "every day in July". */
function dayPart(dom: string, month: string, dow: string): string | null {
  if (any(dom) && any(month) && any(dow)) return 'every day';
  // Both day fields restricted: a day matches either one (Vixie rule), which no short wording conveys.
  if (!any(dom) && !any(dow)) return null;
  const m = any(month) ? null : months(month);
  if (!any(month) && !m) return null;
  const inMonths = m ? (m.range ? `from ${m.text}` : `in ${m.text}`) : '';
  if (!any(dow)) {
    const days = weekdays(dow);
    return days && m ? `${days} ${inMonths}` : days;
  }
  if (any(dom)) return `every day ${inMonths}`;
  const days = monthDays(dom);
  if (!days) return null;
  if (!m) return `on the ${days.text} of every month`;
  if (m.values.length === 1 && days.plain) return `on ${list(days.plain.map(String))} ${MONTHS[m.values[0]! - 1]}`;
  return m.range ? `on the ${days.text} of every month ${inMonths}` : `on the ${days.text} of ${m.text}`;
}

/** Minute and hour fields in words, or null. `days` is the day part, appended as each shape reads best. */
function timePart(minute: string, hour: string, days: string): string | null {
  const minuteItems = items(minute, 0, 59);
  const hourItems = items(hour, 0, 23);
  if (!minuteItems || !hourItems) return null;
  const suffix = days === 'every day' ? '' : ` ${days}`;
  const minuteRun = minute === '*' ? { from: 0, to: 59, step: 1, whole: true } : run(minuteItems, 59);
  const hourRun = run(hourItems, 23);
  const everyHour = hour === '*' || (hourRun?.whole === true && hourRun.step === 1);

  if (minuteRun) {
    const every = minuteRun.step === 1 ? 'every minute' : `every ${minuteRun.step} minutes`;
    if (everyHour)
      return (
        (minuteRun.whole ? every : `${every} from :${pad(minuteRun.from)} to :${pad(minuteRun.to)} of every hour`) +
        suffix
      );
    const hours =
      hourRun && hourRun.step === 1
        ? [hourRun.from, hourRun.to]
        : expand(hourItems).length === 1
          ? [hourItems[0]!.start, hourItems[0]!.start]
          : null;
    if (!hours || (!minuteRun.whole && hours[0] !== hours[1])) return null;
    return `${every} from ${hm(hours[0]!, minuteRun.from)} to ${hm(hours[1]!, minuteRun.to)}${suffix}`;
  }

  const minutes = expand(minuteItems);
  if (minutes.length > MAX_LISTED) return null;
  const at = list(minutes.map((m) => `:${pad(m)}`));
  if (everyHour) return (minutes.length === 1 && minutes[0] === 0 ? 'every hour' : `every hour at ${at}`) + suffix;
  if (hourRun && minutes.length === 1) {
    const m = minutes[0]!;
    if (hourRun.whole)
      return (
        (hourRun.step === 1 ? 'every hour' : `every ${hourRun.step} hours`) + (m === 0 ? '' : ` at :${pad(m)}`) + suffix
      );
    const every = hourRun.step === 1 ? 'every hour' : `every ${hourRun.step} hours`;
    return `${every} from ${hm(hourRun.from, m)} to ${hm(hourRun.to, m)}${suffix}`;
  }
  if (hourRun && hourRun.step === 1 && !hourRun.whole) {
    return `every hour at ${at}, from ${hm(hourRun.from, minutes[0]!)} to ${hm(hourRun.to, minutes[minutes.length - 1]!)}${suffix}`;
  }
  const hours = expand(hourItems);
  if (hours.length * minutes.length > MAX_LISTED) return null;
  return `at ${list(hours.flatMap((h) => minutes.map((m) => hm(h, m))))} ${days}`;
}

/**
 * @example describeCron('*\/5 * * * *') // 'every 5 minutes'
 * @example describeCron('30 2 * * *')  // 'at 02:30 every day'
 * @example describeCron('*\/15 9-17 * * mon-fri') // 'every 15 minutes from 09:00 to 17:45 on weekdays'
 */
export function describeCron(expression: string): string | null {
  const trimmed = expression.trim();
  const expanded = MACROS[trimmed.toLowerCase()] ?? trimmed;
  const fields = expanded.split(/\s+/);
  if (fields.length === 6) {
    const [second, ...rest] = fields;
    const secondStep = STEP.exec(second!);
    if (rest.every((f) => f === '*' || f === '?')) {
      if (second === '*') return 'every second';
      if (secondStep) return Number(secondStep[1]) === 1 ? 'every second' : `every ${Number(secondStep[1])} seconds`;
    }
    return second === '0' ? describeFive(rest) : null;
  }
  return fields.length === 5 ? describeFive(fields) : null;
}

function describeFive(fields: string[]): string | null {
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  const days = dayPart(dom, month, dow);
  return days === null ? null : timePart(minute, hour, days);
}
