/**
 * @module flow — flow control: JSON Pointer parsing for concurrency keys, and the restore pass that rebuilds the
 * queue's counters from PostgreSQL. Its ports (FlowStore, FlowQueue) are in ports/flow.ts.
 *
 * Semantics every queue adapter implements (the Redis one in packages/queue, by Lua scripts on the Redis clock):
 * - An attempt of a job with limits (`FlowTag` on its queue item) starts only if, at the moment it is claimed, its
 *   job has fewer than `maxConcurrency` attempts holding a slot, its key value fewer than `maxConcurrencyPerKey`,
 *   and its rate window (per job, or per key value with `perKey`) fewer than `limit` starts within the last
 *   `periodMs`; claiming takes all of them at once, atomically, so two workers never both take the last slot.
 * - A slot is held from the claim until the attempt is acknowledged (its outcome recorded, or it was dropped), or
 *   until the queue reaps its lease (the worker died). A redelivered attempt takes a slot again.
 * - An attempt that cannot start waits, in order (priority, then due time), without being looked at again until a
 *   slot of what held it back frees or its rate window opens, and without delaying attempts of other jobs.
 * - Limits are read at claim time from the job's current settings (`syncJobs`), so a changed limit applies to the
 *   attempts already waiting; the key value is the one the attempt was created with.
 * - A paused lane starts nothing: claims on it return `paused` and nothing else. Pushes, acknowledgements and
 *   heartbeats go on, so triggers are accepted and running attempts finish.
 * - When the queue has lost its state (never restored, or a flush), claims return `restore` until `restoreFlow`
 *   has run: then counters and rate windows are rebuilt from the running and recently started attempts.
 */
import type { FlowJob, FlowQueue, FlowStore, Logger } from './ports';
import { isLimited, type FlowTag, type Job } from './types';

/**
 * Brings the queue's flow state in line with PostgreSQL: lane states and recently changed job limits always; limits
 * the queue asked for; and, when the queue lost its state (a fresh or flushed Redis), every slot and rate window,
 * rebuilt from the running and recently started attempts. Cheap when nothing was lost. Safe to run at any time and
 * concurrently: slots are written only by the first restore after a loss, which then frees again the slots of
 * attempts that finished while the snapshot was read.
 * @example await restoreFlow({ store, queue, logger })
 */
export async function restoreFlow(
  deps: { store: FlowStore; queue: FlowQueue; logger: Logger },
  options: { changedWithinMs?: number } = {},
): Promise<{ restored: boolean }> {
  const needs = await deps.queue.flowNeeds();
  const snapshot = await deps.store.flowSnapshot({
    jobIds: needs.unknownJobs,
    full: needs.restore,
    changedWithinMs: options.changedWithinMs,
  });
  const { restored } = await deps.queue.flowRestore(snapshot);
  if (restored) {
    // An attempt that finished between the snapshot and the restore was acknowledged before its slot was written back.
    const finished = await deps.store.executionsFinal(snapshot.running.map((r) => r.id));
    if (finished.length > 0) await deps.queue.flowRelease(finished);
    deps.logger.info({
      event: 'flow.restored',
      running: snapshot.running.length,
      starts: snapshot.starts.length,
      released: finished.length,
    });
  }
  return { restored };
}

/** A job's limits as the queue keeps them (its version from updated_at; PostgreSQL's copies are finer grained). */
export function flowJobOf(job: Pick<Job, 'id' | 'limits' | 'updatedAt'>): FlowJob {
  return {
    jobId: job.id,
    limits: isLimited(job.limits) ? job.limits : null,
    version: String(job.updatedAt.getTime() * 1000),
  };
}

/** The queue item tag of an attempt created with flow key `flowKey` (undefined: unlimited). */
export function flowTag(jobId: string, flowKey: string | null | undefined): FlowTag | undefined {
  return flowKey === null || flowKey === undefined ? undefined : { jobId, key: flowKey };
}

/**
 * Parses an RFC 6901 JSON Pointer ("/tenant/id", "" for the whole payload) into its reference tokens.
 * @example parseJsonPointer('/a~1b/0') // { ok: true, path: ['a/b', '0'] }
 */
export function parseJsonPointer(pointer: string): { ok: true; path: string[] } | { ok: false; error: string } {
  if (pointer === '') return { ok: true, path: [] };
  if (!pointer.startsWith('/'))
    return { ok: false, error: 'a JSON Pointer is empty or starts with "/" (e.g. "/tenant")' };
  const path: string[] = [];
  for (const token of pointer.slice(1).split('/')) {
    if (/~(?![01])/.test(token))
      return {
        ok: false,
        error: `"~" must be followed by 0 or 1 in ${JSON.stringify(pointer)} (~0 is "~", ~1 is "/")`,
      };
    path.push(token.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return { ok: true, path };
}
