/**
 * @module job-definitions — a per-process cache of what a worker needs from a job to run it, keyed by (job id,
 * version). The worker reads claimed executions on its hot path; joining each batch with jobs re-reads and re-parses
 * the same few definitions thousands of times a second. Every edit of a job bumps its version, and the claimed rows
 * are read with their job's current version, so an edited definition is a cache miss at once, on every worker: no
 * attempt that starts after an edit commits runs the old definition. The TTL only bounds the memory of old entries.
 */
import type { JobDefinition } from '@jobs/core';
import type pg from 'pg';
import { JOB_DEFINITION_COLUMNS, toJobDefinition, type JobDefinitionRow } from './rows';

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
      const { rows } = await pool.query<JobDefinitionRow & { id: string }>(
        `SELECT id, ${JOB_DEFINITION_COLUMNS} FROM jobs WHERE id = ANY($1::bigint[])`,
        [[...missing]],
      );
      if (cache.size + rows.length > max) cache.clear();
      for (const r of rows) {
        const definition = toJobDefinition(r);
        cache.set(r.id, { definition, expires: now + options.ttlMs });
        found.set(r.id, definition);
      }
      return found;
    },
  };
}
