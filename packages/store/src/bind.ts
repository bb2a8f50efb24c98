/** @module bind — turns query functions that take the pool first into the store's methods bound to one pool. */
import type pg from 'pg';

/** A query function: the pool, then its own arguments. */
type Query = (pool: pg.Pool, ...args: never) => unknown;

/** Each query of `T` without its pool argument. */
export type Bound<T extends Record<string, Query>> = {
  [K in keyof T]: T[K] extends (pool: pg.Pool, ...args: infer A) => infer R ? (...args: A) => R : never;
};

/**
 * The queries of `queries` as methods that pass `pool` first: one line per query in the store instead of a wrapper
 * that restates its parameters.
 * @example bindPool(pool, { jobGet }).jobGet('42')
 */
export function bindPool<T extends Record<string, Query>>(pool: pg.Pool, queries: T): Bound<T> {
  const bound: Record<string, unknown> = {};
  for (const [name, query] of Object.entries(queries)) {
    const call = query as (pool: pg.Pool, ...args: unknown[]) => unknown;
    bound[name] = (...args: unknown[]) => call(pool, ...args);
  }
  return bound as Bound<T>;
}
