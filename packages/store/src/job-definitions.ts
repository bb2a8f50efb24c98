/**
 * @module job-definitions — a short-lived per-process cache of what a worker needs from a job to run it.
 * The worker reads claimed executions on its hot path; joining each batch with jobs re-reads and re-parses the same
 * few definitions thousands of times a second. A definition is never edited in place (a job is created, paused,
 * resumed or deleted; none of those change how its runs execute), and a deleted job's waiting executions are
 * cancelled, so they are never loaded. The TTL bounds staleness should editing ever be added.
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
  maxRetries: number;
  backoff: Backoff;
  overlap: OverlapPolicy;
}

export interface JobDefinitions {
  get(pool: pg.Pool, ids: readonly string[]): Promise<Map<string, JobDefinition>>;
}

export function jobDefinitions(options: { ttlMs: number; max?: number }): JobDefinitions {
  const cache = new Map<string, { definition: JobDefinition; expires: number }>();
  const max = options.max ?? 10_000;
  return {
    async get(pool, ids) {
      const now = Date.now();
      const found = new Map<string, JobDefinition>();
      const missing: string[] = [];
      for (const id of new Set(ids)) {
        const hit = cache.get(id);
        if (hit && hit.expires > now) found.set(id, hit.definition);
        else missing.push(id);
      }
      if (missing.length === 0) return found;
      const { rows } = await pool.query(
        `SELECT id, payload, command, handler, http, lambda, timeout_ms, max_retries, backoff_base_ms, backoff_factor, backoff_max_ms,
                backoff_jitter, overlap
         FROM jobs WHERE id = ANY($1::bigint[])`,
        [missing],
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
          maxRetries: r.max_retries,
          backoff: toBackoff(r),
          overlap: r.overlap,
        };
        cache.set(r.id, { definition, expires: now + options.ttlMs });
        found.set(r.id, definition);
      }
      return found;
    },
  };
}
