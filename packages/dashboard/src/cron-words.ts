/**
 * @module dashboard/cron-words — common cron expressions in words ("every 5 minutes", "at 02:30 every day").
 * Only shapes it fully understands are described; anything else returns null and the page shows the expression alone.
 * Assumes a valid expression (the scheduler's parser has accepted it).
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
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

const NUMBER = /^\d{1,2}$/;
const STEP = /^\*\/(\d{1,2})$/;
const any = (f: string) => f === '*' || f === '?';
const pad = (n: number) => String(n).padStart(2, '0');

/** "a", "a and b", "a, b and c". */
function list(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** Comma-separated plain values (numbers or names), or null for ranges, steps and wildcards. */
function values(field: string, names: string[] = [], min = 0): number[] | null {
  const out: number[] = [];
  for (const item of field.toUpperCase().split(',')) {
    const named = names.indexOf(item);
    if (named >= 0) out.push(named + min);
    else if (NUMBER.test(item)) out.push(Number(item));
    else return null;
  }
  return out;
}

function weekdays(field: string): string | null {
  const upper = field.toUpperCase();
  if (['1-5', 'MON-FRI'].includes(upper)) return 'on weekdays';
  if (['0,6', '6,0', '6,7', '6-7', 'SAT,SUN', 'SUN,SAT'].includes(upper)) return 'on weekends';
  const range = /^([0-7]|[A-Z]{3})-([0-7]|[A-Z]{3})$/.exec(upper);
  if (range) {
    const day = (t: string) => (NUMBER.test(t) ? Number(t) % 7 : DAY_NAMES.indexOf(t));
    const [a, b] = [day(range[1]!), day(range[2]!)];
    return a >= 0 && b >= 0 ? `${DAYS[a]} to ${DAYS[b]}` : null;
  }
  const days = values(field, DAY_NAMES);
  if (!days || days.some((d) => d > 7)) return null;
  return `on ${list([...new Set(days.map((d) => d % 7))].map((d) => DAYS[d]!))}`;
}

/** The day part: "every day", "on weekdays", "on the 1st of every month", "on 1 January". */
function dayPart(dom: string, month: string, dow: string): string | null {
  if (any(dom) && any(month) && any(dow)) return 'every day';
  if (any(dom) && any(month)) return weekdays(dow);
  const months = any(month) ? null : values(month, MONTH_NAMES, 1);
  if (!any(month) && (!months || months.some((m) => m < 1 || m > 12))) return null;
  if (!any(dow)) return null;
  if (any(dom)) return `every day in ${list(months!.map((m) => MONTHS[m - 1]!))}`;
  const days = values(dom);
  if (!days) return null;
  if (!months) return `on the ${list(days.map(ordinal))} of every month`;
  if (months.length === 1) return `on ${list(days.map(String))} ${MONTHS[months[0]! - 1]}`;
  return null;
}

function describeFive(fields: string[]): string | null {
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  const allDays = any(dom) && any(month) && any(dow);
  if (minute === '*' && hour === '*' && allDays) return 'every minute';
  const minuteStep = STEP.exec(minute);
  if (minuteStep && hour === '*' && allDays) return Number(minuteStep[1]) === 1 ? 'every minute' : `every ${Number(minuteStep[1])} minutes`;
  const minutes = values(minute);
  if (!minutes) return null;
  const days = dayPart(dom, month, dow);
  if (!days) return null;
  const suffix = days === 'every day' ? '' : ` ${days}`;
  if (hour === '*') {
    return (minutes.length === 1 && minutes[0] === 0 ? 'every hour' : `every hour at ${list(minutes.map((m) => `:${pad(m)}`))}`) + suffix;
  }
  const hourStep = STEP.exec(hour);
  if (hourStep && minutes.length === 1) {
    const n = Number(hourStep[1]);
    const at = minutes[0] === 0 ? '' : ` at :${pad(minutes[0]!)}`;
    return (n === 1 ? `every hour${at}` : `every ${n} hours${at}`) + suffix;
  }
  const hourRange = /^(\d{1,2})-(\d{1,2})$/.exec(hour);
  if (hourRange && minutes.length === 1) {
    return `every hour from ${pad(Number(hourRange[1]))}:${pad(minutes[0]!)} to ${pad(Number(hourRange[2]))}:${pad(minutes[0]!)}${suffix}`;
  }
  const hours = values(hour);
  if (!hours || hours.length * minutes.length > 6) return null;
  const times = hours.flatMap((h) => minutes.map((m) => `${pad(h)}:${pad(m)}`));
  return `at ${list(times)} ${days}`;
}

/**
 * @example describeCron('*\/5 * * * *') // 'every 5 minutes'
 * @example describeCron('30 2 * * *')  // 'at 02:30 every day'
 * @example describeCron('0 9 * * 1-5') // 'at 09:00 on weekdays'
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
