/** @module duration — parses human durations from configuration ("10s", "500ms", "1m", "2h", "365d"). */

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Milliseconds in a duration string, or null if it is not one. A bare number means seconds.
 * @example parseDuration('1m') // 60000
 */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) return null;
  const value = Number(match[1]) * UNITS[match[2] ?? 's']!;
  return Number.isFinite(value) ? Math.round(value) : null;
}
