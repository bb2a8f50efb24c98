/**
 * @module strict-start — starting executions of jobs whose overlap policy is `forbid` or `replace`: unlike the
 * write-behind path, their start is written (under the job row's lock) before they run, and the outcome of that
 * decision (skipped runs, replaced runs) is logged and told to Redis here.
 */
import type { Claim, Clock, Logger, StartedExecution, TransitionSink, WorkerQueue, WorkerStore } from './ports';
import { transition, waitingStatus } from './transitions';
import type { Lane, Transition } from './types';

export async function startStrictly(
  deps: {
    store: Pick<WorkerStore, 'executionsStart'>;
    queue: Pick<WorkerQueue, 'withdraw'>;
    clock: Clock;
    sink: TransitionSink;
    logger: Logger;
  },
  input: { workerId: string; leaseMs: number; lane: Lane; executions: StartedExecution[] },
): Promise<{ started: { executions: StartedExecution[]; skippedCount: number }; drop: Claim[] }> {
  const { workerId, lane, executions } = input;
  const claims = executions.map((e) => ({ id: e.id, token: e.token }));
  const result = await deps.store.executionsStart({ workerId, leaseMs: input.leaseMs, claims });
  const now = deps.clock.now();
  const transitions: Transition[] = [];
  const drop: Claim[] = [];
  for (const skipped of result.skipped) {
    drop.push({ id: skipped.id, token: skipped.token });
    transitions.push(
      transition({
        jobId: skipped.jobId,
        executionId: skipped.id,
        attempt: skipped.attempt,
        from: waitingStatus(skipped.trigger),
        to: 'skipped',
        workerId,
        at: now,
        error: skipped.reason,
      }),
    );
  }
  for (const r of result.replaced) {
    transitions.push(
      transition({
        jobId: r.jobId,
        executionId: r.id,
        attempt: r.attempt,
        from: 'running',
        to: 'cancelled',
        workerId,
        at: now,
        error: 'replaced by a newer run (overlap: replace)',
      }),
    );
  }
  if (transitions.length > 0) deps.sink.emit(transitions);
  if (result.replaced.length > 0) {
    // The replaced runs' workers kill them on this message (or at their next heartbeat, which finds the row gone).
    deps.queue
      .withdraw(result.replaced.map((r) => ({ id: r.id, lane, priority: 0, dueAt: now, running: true })))
      .catch((error) => deps.logger.warn({ event: 'worker.withdraw_failed', worker_id: workerId, err: String(error) }));
  }
  const startedIds = new Set(result.started.map((s) => s.id));
  const skippedIds = new Set(result.skipped.map((s) => s.id));
  for (const e of executions)
    if (!startedIds.has(e.id) && !skippedIds.has(e.id)) drop.push({ id: e.id, token: e.token });
  return { started: { executions: result.started, skippedCount: result.skipped.length }, drop };
}
