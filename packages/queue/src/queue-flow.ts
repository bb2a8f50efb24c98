/**
 * @module queue-flow — the flow-control side of the Redis queue: restoring counters and limits from a PostgreSQL
 * snapshot, freeing slots, and reading why attempts wait. Enforcement itself is in the claim, push, settle, reap and
 * withdraw scripts (lua/, key layout in lua/includes/flow.lua); semantics in packages/core/src/flow.ts.
 */
import type { FlowJobState, FlowSnapshot } from '@jobs/core';
import type { QueueKeys } from './keys';
import type { RedisClient, ScriptClient } from './client';

const nullable = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

/** The snapshot as rebuild-2.lua reads it: each list preceded by its length. */
function restoreArgs(s: FlowSnapshot): string[] {
  const args = [s.full ? '1' : '0', String(s.lanes.length)];
  for (const l of s.lanes) args.push(l.lane, l.paused ? '1' : '0', l.version);
  args.push(String(s.jobs.length));
  for (const j of s.jobs) {
    const l = j.limits;
    args.push(j.jobId, nullable(l?.maxConcurrency), nullable(l?.maxConcurrencyPerKey), nullable(l?.rateLimit?.limit));
    args.push(nullable(l?.rateLimit?.periodMs), l?.rateLimit?.perKey ? '1' : '', j.version);
  }
  args.push(String(s.running.length));
  for (const r of s.running) args.push(r.id, r.jobId, r.lane, r.key);
  args.push(String(s.starts.length));
  for (const st of s.starts)
    args.push(st.key === '' ? st.jobId : `${st.jobId}:${st.key}`, String(st.at.getTime()), `pg:${st.id}`);
  return args;
}

export function flowOperations(redis: RedisClient, keys: QueueKeys, scripts: ScriptClient) {
  return {
    async flowNeeds(): Promise<{ restore: boolean; unknownJobs: string[] }> {
      const [restored, unknown] = await Promise.all([
        redis.hexists(keys.control, 'restored'),
        redis.zrange(`${keys.flow}:unknown`, '0', '999'),
      ]);
      const jobs = new Set<string>();
      if (unknown.length > 0) {
        for (const tag of await redis.hmget(`${keys.flow}:items`, ...unknown)) if (tag) jobs.add(tag.split('\t')[0]!);
      }
      return { restore: restored === 0, unknownJobs: [...jobs] };
    },

    async flowRestore(snapshot: FlowSnapshot): Promise<{ restored: boolean }> {
      return { restored: (await scripts.rebuild(keys.control, keys.flow, ...restoreArgs(snapshot))) === 1 };
    },

    async flowRelease(ids: readonly string[]): Promise<void> {
      if (ids.length === 0) return;
      const k = keys.lane('short');
      await scripts.settle(k.lease, k.tokens, k.dead, k.deliveries, keys.flow, '', '', ids.join(' '));
    },

    /** Why attempts of these jobs wait (none given: every job that has attempts waiting, at most 200). */
    async flowInspect(jobIds: readonly string[] = []): Promise<FlowJobState[]> {
      const reply = (await scripts.inspect(keys.flow, ...jobIds)) as [
        string,
        number,
        number,
        number,
        number,
        (string | number)[],
        number,
        number,
      ][];
      return reply.map(([jobId, running, wc, wk, wr, flat, inWindow, nextStart]) => {
        const keyStates: FlowJobState['keys'] = [];
        for (let i = 0; i < flat.length; i += 3)
          keyStates.push({ key: String(flat[i]), running: Number(flat[i + 1]), waiting: Number(flat[i + 2]) });
        keyStates.sort((a, b) => b.waiting - a.waiting);
        return {
          jobId: String(jobId),
          running,
          waiting: { maxConcurrency: wc, maxConcurrencyPerKey: wk, rateLimit: wr },
          keys: keyStates.slice(0, 100),
          rate: inWindow < 0 ? null : { inWindow, nextStartAt: nextStart < 0 ? null : new Date(nextStart) },
        };
      });
    },

    /** Attempts parked because their job's limits were unknown to Redis (a restore lets them go). */
    async flowUnknownCount(): Promise<number> {
      return redis.zcard(`${keys.flow}:unknown`);
    },
  };
}
