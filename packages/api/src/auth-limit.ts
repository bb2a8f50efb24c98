/**
 * @module auth-limit — the failed-authentication limit of the API: each source address may present a wrong key
 * (`Authorization` that names no configured key) `max` times a window; after that every request from it is a 429
 * with Retry-After until the window closes, even with the right key, or a guess that hit would be told apart from
 * one that missed. Requests without an Authorization header are not counted: they guess nothing.
 *
 * Counts are kept in the process (a Lambda container, the local API), never in the database: checking the limit
 * costs every request nothing but a map lookup, and a flood of wrong keys writes nothing. The map holds at most
 * `capacity` addresses; when full, the oldest window goes (a closed one first, as windows close in the order they
 * opened).
 */

export interface AuthLimitOptions {
  /** Wrong keys a source address may present per window. */
  max: number;
  windowMs: number;
  /** Most addresses tracked at once. */
  capacity: number;
  now: () => number;
}

export interface AuthLimiter {
  /** Milliseconds until `source` may try again, or 0 when it may now. */
  retryAfterMs(source: string): number;
  /** Counts one wrong key from `source`. */
  failed(source: string): void;
  /** Addresses tracked now (for tests of the bound). */
  size(): number;
}

/** Wrong keys a source address may present a minute before its requests are refused (429) until the minute ends. */
export const AUTH_MAX_FAILURES = 10;
export const AUTH_WINDOW_MS = 60_000;
export const AUTH_TRACKED_SOURCES = 10_000;

export function authLimiter(options: AuthLimitOptions): AuthLimiter {
  const windows = new Map<string, { start: number; failures: number }>();
  const open = (start: number, now: number) => now - start < options.windowMs;

  // Entries are in the order their windows opened (a new window is inserted anew): the first ones are the oldest,
  // closed before any other closes.
  function makeRoom(): void {
    for (const source of windows.keys()) {
      if (windows.size < options.capacity) return;
      windows.delete(source);
    }
  }

  return {
    retryAfterMs(source) {
      const w = windows.get(source);
      if (!w) return 0;
      const now = options.now();
      if (!open(w.start, now)) return 0;
      return w.failures >= options.max ? w.start + options.windowMs - now : 0;
    },
    failed(source) {
      const now = options.now();
      const w = windows.get(source);
      if (w && open(w.start, now)) {
        w.failures++;
        return;
      }
      windows.delete(source);
      if (windows.size >= options.capacity) makeRoom();
      windows.set(source, { start: now, failures: 1 });
    },
    size: () => windows.size,
  };
}
