/** @module trace-context — W3C Trace Context `traceparent` values, checked before anything propagates one. */

const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * True for a version-00 traceparent with non-zero ids; anything else is ignored rather than passed on.
 * @example isTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01') // true
 */
export function isTraceparent(value: string | null | undefined): value is string {
  return typeof value === 'string' && TRACEPARENT.test(value);
}
