/** @module cron/fields — the six fields (ranges, names), the macros, and expanding one field with a precise error message. */
import { MAX_DAYS } from './search';

export const MACROS: Readonly<Record<string, string>> = {
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
const DOW_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** value of names[0] */
  readonly nameBase?: number;
  readonly allowQuestion?: boolean;
}

export const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
export const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
export const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
export const DOM: FieldSpec = { name: 'day-of-month', min: 1, max: 31, allowQuestion: true };
export const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 };
export const DOW: FieldSpec = {
  name: 'day-of-week',
  min: 0,
  max: 7,
  names: DOW_NAMES,
  nameBase: 0,
  allowQuestion: true,
};

export function neverFiresReason(days: number[], months: number[]): string {
  const impossible = days.filter((d) => months.every((m) => d > MAX_DAYS[m - 1]!));
  const dayText = impossible.length === 1 ? `day ${impossible[0]}` : `days ${joinList(impossible.map(String), 'and')}`;
  const verb = impossible.length === 1 ? 'does' : 'do';
  return `${dayText} ${verb} not occur in ${joinList(
    months.map((m) => MONTH_FULL[m - 1]!),
    'or',
  )}`;
}

function joinList(items: string[], conj: string): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${conj} ${items[items.length - 1]}`;
}

const SPECIAL_MSG =
  'the special characters L, W, # and H are not supported (use plain values, ranges, lists and steps)';

/** How many distinct values a field has (day-of-week: 7, its 7 being Sunday again): the largest step it takes. */
function valueCount(spec: FieldSpec): number {
  return spec === DOW ? 7 : spec.max - spec.min + 1;
}

/** Expands one field to its sorted values, or returns an error sentence (without the field prefix). */
export function expandField(spec: FieldSpec, text: string): number[] | string {
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
      step = stepText.length > 4 ? Infinity : Number(stepText);
      if (step < 1) return `step in "${item}" must be at least 1.`;
      const values = valueCount(spec);
      if (step > values)
        return `step ${stepText} in "${item}" is larger than the ${spec.name} field's ${values} values (at most ${values}).`;
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
