/**
 * @module query-text — every query parameter, name and value, must be text PostgreSQL can hold: valid UTF-8 once its
 * percent-escapes are decoded (an unpaired surrogate, spelled as the bytes ED A0 80 and the like, is not), and no
 * NUL. Checked once for the API and the dashboard, before any route reads a parameter, so no route can forget it: a
 * bad one is a 400 naming the parameter, never a string decoded into U+FFFD or a NUL that fails in the database.
 */
import type { MiddlewareHandler } from 'hono';
import { validationFailed, type ErrorDetail } from './errors';

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8 = new TextEncoder();
const HEX = /^[0-9A-Fa-f]{2}$/;

/** A form-encoded component's text (`+` is a space, `%XX` a byte; a `%` without two hex digits stands for itself). */
function decodeComponent(raw: string): string | null {
  if (!/[%+]/.test(raw)) return raw;
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '+') bytes.push(0x20);
    else if (ch === '%' && HEX.test(raw.slice(i + 1, i + 3))) {
      bytes.push(parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      // A URL's serialization escapes everything but ASCII; whatever else is here is taken as the text it is.
      const code = raw.codePointAt(i)!;
      if (code >= 0xd800 && code <= 0xdfff) return null;
      const char = String.fromCodePoint(code);
      bytes.push(...utf8.encode(char));
      i += char.length - 1;
    }
  }
  try {
    return strict.decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

const shown = (name: string) => (name.length > 64 ? `${name.slice(0, 64)}…` : name);

/** What is wrong with a query string (without its `?`), as the detail of a 400; null when nothing is. */
function queryProblem(search: string): ErrorDetail | null {
  for (const part of search.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeComponent(eq < 0 ? part : part.slice(0, eq));
    if (name === null) return { path: 'query', message: 'a parameter name is not valid UTF-8 once percent-decoded' };
    if (name.includes('\u0000')) return { path: 'query', message: 'a parameter name contains NUL (%00)' };
    const value = decodeComponent(eq < 0 ? '' : part.slice(eq + 1));
    const path = `query.${shown(name)}`;
    if (value === null) {
      return {
        path,
        message: 'is not valid UTF-8 once percent-decoded (unpaired surrogates and stray bytes are not text)',
      };
    }
    if (value.includes('\u0000')) return { path, message: 'must not contain NUL (%00)' };
  }
  return null;
}

export function queryText(): MiddlewareHandler {
  return async (c, next) => {
    const url = c.req.url;
    const start = url.indexOf('?');
    if (start >= 0) {
      const end = url.indexOf('#', start);
      const problem = queryProblem(url.slice(start + 1, end < 0 ? undefined : end));
      if (problem) throw validationFailed([problem]);
    }
    await next();
  };
}
