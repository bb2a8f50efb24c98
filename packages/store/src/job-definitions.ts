/**
 * @module job-definitions — a per-process cache of what a worker needs from a job to run it, keyed by (job id,
 * version). The worker reads claimed executions on its hot path; joining each batch with jobs re-reads and re-parses
 * the same few definitions thousands of times a second. Every edit of a job bumps its version, and the claimed rows
 * are read with their job's current version, so an edited definition is a cache miss at once, on every worker: no
 * attempt that starts after an edit commits runs the old definition. The TTL only bounds the memory of old entries.
 */
import type { Backoff, HttpTarget, LambdaTarget, OverlapPolicy } from '@jobs/core';
import type pg from 'pg';
import { toBackoff } from './rows';

export interface JobDefinition {
  payload: unknown;
  command: string | null;
  handler: string | null;
  http: HttpTarget | null;
  lambda: LambdaTarget | null;
  timeoutMs: number;
  timezone: string;
  maxRetries: number;
  backoff: Backoff;
  overlap: OverlapPolicy;
  version: number;
}

export interface JobDefinitions {
  /** The definitions of these jobs at (at least) these versions, by job id. */
  get(pool: pg.Pool, wanted: readonly { id: string; version: number }[]): Promise<Map<string, JobDefinition>>;
}

export function jobDefinitions(options: { ttlMs: number; max?: number }): JobDefinitions {
  const cache = new Map<string, { definition: JobDefinition; expires: number }>();
  const max = options.max ?? 10_000;
  return {
    async get(pool, wanted) {
      const now = Date.now();
      const found = new Map<string, JobDefinition>();
      const missing = new Set<string>();
      for (const { id, version } of wanted) {
        if (found.has(id) || missing.has(id)) continue;
        const hit = cache.get(id);
        if (hit && hit.expires > now && hit.definition.version >= version) found.set(id, hit.definition);
        else missing.add(id);
      }
      if (missing.size === 0) return found;
      // The row may be newer than the version asked for (edited since): its own version is what the attempt records.
      const { rows } = await pool.query(
        `SELECT id, payload, command, handler, http, lambda, timeout_ms, max_retries, backoff_base_ms, backoff_factor, backoff_max_ms,
                backoff_jitter, overlap, version, timezone
         FROM jobs WHERE id = ANY($1::bigint[])`,
        [[...missing]],
      );
      if (cache.size + rows.length > max) cache.clear();
      for (const r of rows) {
        const definition: JobDefinition = {
          payload: r.payload,
          command: r.command,
          handler: r.handler,
          http: r.http ?? null,
          lambda: r.lambda ?? null,
          timeoutMs: r.timeout_ms,
          timezone: r.timezone,
          maxRetries: r.max_retries,
          backoff: toBackoff(r),
          overlap: r.overlap,
          version: r.version,
        };
        cache.set(r.id, { definition, expires: now + options.ttlMs });
        found.set(r.id, definition);
      }
      return found;
    },
  };
}
