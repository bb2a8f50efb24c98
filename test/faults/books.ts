/**
 * The books: what every scenario checks in PostgreSQL (and Redis) once the system has drained.
 *
 * For every execution chain (root_id), and in particular every acknowledged one:
 * - exactly one terminal outcome (succeeded, dead, cancelled; `skipped` for overlap-forbid runs);
 * - lost: an acknowledged root with no row at all, or a chain with no terminal outcome and no live row, or one
 *   still live after the drain timeout (stuck);
 * - duplicated: two terminal rows in a chain, two successes, one attempt number recorded twice, or a failed
 *   attempt with other than exactly one retry;
 * - no lease left behind: no running row, no lease expiry on a finished row, the Redis lease sets and token hashes
 *   of both lanes empty.
 */
import { LANES } from '@jobs/core';
import type { Scenario } from './harness';
import { sleep, TIMING } from './harness';

export interface Books {
  acknowledged: number;
  chains: number;
  lost: number;
  duplicated: number;
  problems: string[];
  drainMs: number;
}

const TERMINAL = `('succeeded', 'dead', 'cancelled', 'skipped')`;
const LIVE = `('queued', 'retrying', 'running')`;

/** Waits until no execution is queued, retrying or running (or the timeout passes); returns how long it took. */
async function drain(s: Scenario, timeoutMs: number): Promise<{ drained: boolean; ms: number; live: number }> {
  const started = Date.now();
  let live = -1;
  while (Date.now() - started < timeoutMs) {
    try {
      const rows = await s.q<{ n: number }>(
        `SELECT count(*)::int AS n FROM executions WHERE status IN ${LIVE}`,
        [],
        5000,
      );
      live = rows[0]!.n;
      if (live === 0) return { drained: true, ms: Date.now() - started, live };
    } catch {
      // the database may be restarting
    }
    await sleep(250);
  }
  return { drained: false, ms: Date.now() - started, live };
}

async function redisLeases(s: Scenario): Promise<{ leases: number; tokens: number }> {
  if (!s.redisQueue) {
    const [row] = await s.q<{ leases: number; tokens: number }>(
      `SELECT count(*) FILTER (WHERE state = 'leased')::int AS leases, count(*) FILTER (WHERE token IS NOT NULL)::int AS tokens FROM queue_items`,
    );
    return row!;
  }
  let leases = 0;
  let tokens = 0;
  for (const lane of LANES) {
    const k = s.redisQueue.keys.lane(lane);
    leases += await s.redis.zcard(k.lease);
    tokens += await s.redis.hlen(k.tokens);
  }
  return { leases, tokens };
}

export async function checkBooks(
  s: Scenario,
  acknowledgedRoots: Iterable<string>,
  options: { drainTimeoutMs?: number } = {},
): Promise<Books> {
  const problems: string[] = [];
  const acked = new Set(acknowledgedRoots);
  const drained = await drain(s, options.drainTimeoutMs ?? 60_000);
  if (!drained.drained) problems.push(`not drained after ${drained.ms} ms: ${drained.live} live executions`);

  // Leases in Redis go once their attempts are acknowledged, or when the reaper finds them expired.
  const deadline = Date.now() + TIMING.leaseMs * 2 + TIMING.scheduleIntervalMs * 4 + 2000;
  let leases = await redisLeases(s);
  while ((leases.leases > 0 || leases.tokens > 0) && Date.now() < deadline) {
    await sleep(250);
    leases = await redisLeases(s);
  }
  if (leases.leases > 0 || leases.tokens > 0)
    problems.push(`the queue (${s.backend}) still holds ${leases.leases} leases and ${leases.tokens} lease tokens`);

  const chains = await s.q<{
    root: string;
    n: number;
    attempts: number;
    terminal: number;
    succeeded: number;
    live: number;
    max_attempt: number;
    statuses: string;
  }>(
    `SELECT coalesce(root_id, id)::text AS root, count(*)::int AS n, count(DISTINCT attempt)::int AS attempts,
            count(*) FILTER (WHERE status IN ${TERMINAL})::int AS terminal,
            count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
            count(*) FILTER (WHERE status IN ${LIVE})::int AS live,
            max(attempt)::int AS max_attempt,
            string_agg(attempt || ':' || status, ',' ORDER BY attempt, id) AS statuses
     FROM executions GROUP BY 1`,
  );
  const byRoot = new Map(chains.map((c) => [c.root, c]));
  const lostRoots = new Set<string>();
  const dupRoots = new Set<string>();
  const sample = (label: string, roots: Iterable<string>) => {
    const list = [...roots];
    if (list.length > 0) {
      problems.push(
        `${label}: ${list.length} (${list
          .slice(0, 5)
          .map((r) => `${r}[${byRoot.get(r)?.statuses ?? 'no row'}]`)
          .join(' ')})`,
      );
    }
  };

  const missing = [...acked].filter((r) => !byRoot.has(r));
  missing.forEach((r) => lostRoots.add(r));
  sample('acknowledged but not in PostgreSQL', missing);

  const noOutcome = chains.filter((c) => c.terminal === 0 && c.live === 0).map((c) => c.root);
  noOutcome.forEach((r) => lostRoots.add(r));
  sample('chains with no terminal outcome and nothing live', noOutcome);
  const stuck = chains.filter((c) => c.terminal === 0 && c.live > 0).map((c) => c.root);
  stuck.forEach((r) => lostRoots.add(r));
  sample('chains still live after the drain (stuck)', stuck);

  const twoTerminal = chains.filter((c) => c.terminal > 1).map((c) => c.root);
  const twoSuccesses = chains.filter((c) => c.succeeded > 1).map((c) => c.root);
  const attemptTwice = chains.filter((c) => c.attempts !== c.n).map((c) => c.root);
  const gaps = chains.filter((c) => c.max_attempt !== c.n && c.attempts === c.n).map((c) => c.root);
  for (const list of [twoTerminal, twoSuccesses, attemptTwice]) list.forEach((r) => dupRoots.add(r));
  sample('chains with more than one terminal outcome', twoTerminal);
  sample('chains with more than one success', twoSuccesses);
  sample('chains with an attempt recorded twice', attemptTwice);
  gaps.forEach((r) => lostRoots.add(r));
  sample('chains with a missing attempt number', gaps);

  const badRetries = await s.q<{ id: string; root: string; retries: number }>(
    `SELECT f.id::text, coalesce(f.root_id, f.id)::text AS root,
            (SELECT count(*)::int FROM executions r WHERE r.retry_of = f.id AND r.trigger = 'retry') AS retries
     FROM executions f WHERE f.status = 'failed'
       AND (SELECT count(*) FROM executions r WHERE r.retry_of = f.id AND r.trigger = 'retry') <> 1`,
  );
  for (const b of badRetries) (b.retries > 1 ? dupRoots : lostRoots).add(b.root);
  if (badRetries.length > 0)
    problems.push(
      `failed attempts without exactly one retry: ${badRetries
        .slice(0, 5)
        .map((b) => `${b.id}(${b.retries})`)
        .join(' ')}`,
    );

  const leftovers = await s.q<{ running: number; leased: number }>(
    `SELECT count(*) FILTER (WHERE status = 'running')::int AS running,
            count(*) FILTER (WHERE status NOT IN ${LIVE} AND lease_expires_at IS NOT NULL)::int AS leased
     FROM executions`,
  );
  if (leftovers[0]!.running > 0) problems.push(`${leftovers[0]!.running} executions still running`);
  if (leftovers[0]!.leased > 0) problems.push(`${leftovers[0]!.leased} finished executions still carry a lease expiry`);

  return {
    acknowledged: acked.size,
    chains: chains.length,
    lost: lostRoots.size,
    duplicated: dupRoots.size,
    problems,
    drainMs: drained.ms,
  };
}
