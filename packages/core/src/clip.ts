/** @module clip — long user-given text (ids, paths, names) cut before it goes into an error message or a log line. */

/** The longest id or path echoed in errors and logs. */
const ECHO_LIMIT = 200;

/** `text` cut to `limit` characters, marked with how much was cut. @example clip('x'.repeat(500)) // 'xxx…(+300)' */
export function clip(text: string, limit = ECHO_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…(+${text.length - limit})`;
}
