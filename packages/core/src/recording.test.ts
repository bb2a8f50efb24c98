/** The Recorder against fakes of its own ports (WorkerStore.executionsRecord, WorkerQueue.settle): no database. */
import { describe, expect, it } from 'vitest';
import { Recorder, type RecorderDeps, type RecordingCounts } from './recording';
import type { CreatedExecution, Outcome, RecordResult, StartRecord, StartedExecution } from './ports';
import type { Transition } from './types';

function execution(id: string): StartedExecution {
  return {
    id,
    token: `t${id}`,
    jobId: 'j1',
    attempt: 1,
    rootId: id,
    trigger: 'manual',
    lane: 'short',
    priority: 0,
    scheduledFor: new Date(0),
    payload: null,
    command: 'true',
    handler: null,
    http: null,
    lambda: null,
    timeoutMs: 1000,
    timezone: 'UTC',
    maxRetries: 1,
    backoff: { baseMs: 1000, factor: 2, maxMs: 60_000, jitter: 'none' },
    overlap: 'allow',
    flowKey: null,
    jobVersion: 1,
    delivery: 1,
  };
}

function outcome(id: string, status: Outcome['status']): Outcome {
  return {
    id,
    token: `t${id}`,
    jobId: 'j1',
    attempt: 1,
    lane: 'short',
    priority: 0,
    status,
    exitCode: status === 'succeeded' ? 0 : 1,
    output: null,
    error: null,
    durationMs: 1,
    retryDelayMs: status === 'failed' ? 1000 : null,
    workerId: 'w1',
  };
}

/**
 * A store whose record call answers by `decide` (default: every start wins, every outcome is written, a failed one
 * gets a retry), or throws while `down`; and a queue that keeps what it is told to settle.
 */
function fakes(decide?: (input: { starts: StartRecord[]; outcomes: Outcome[] }) => RecordResult) {
  const calls: { starts: StartRecord[]; outcomes: Outcome[] }[] = [];
  const settled: Parameters<RecorderDeps['queue']['settle']>[0][] = [];
  const transitions: Transition[] = [];
  const warnings: object[] = [];
  const state = { down: false };
  const deps: RecorderDeps = {
    store: {
      async executionsRecord(input) {
        if (state.down) throw new Error('connection refused');
        calls.push({ starts: input.starts, outcomes: input.outcomes });
        if (decide) return decide(input);
        const retries: CreatedExecution[] = input.outcomes
          .filter((o) => o.status === 'failed')
          .map((o) => ({
            id: `${o.id}r`,
            lane: o.lane,
            priority: o.priority,
            dueAt: new Date(0),
            jobId: o.jobId,
            attempt: o.attempt + 1,
            trigger: 'retry',
            status: 'retrying',
            scheduledFor: new Date(0),
          }));
        return { started: new Set(input.starts.map((s) => s.id)), recorded: input.outcomes, rejected: [], retries };
      },
    },
    queue: {
      async settle(input) {
        settled.push(input);
      },
    },
    clock: { now: () => new Date(0) },
    sink: { emit: (t) => transitions.push(...t) },
    logger: { debug() {}, info() {}, warn: (o) => warnings.push(o), error() {} },
  };
  const counts: RecordingCounts = { succeeded: 0, failed: 0, dead: 0, rejected: 0 };
  const lost: string[] = [];
  const recorder = new Recorder(deps, {
    workerId: 'w1',
    leaseMs: 30_000,
    counts,
    onStartLost: (id) => lost.push(id),
    onFlushed: () => {},
  });
  return { recorder, calls, settled, transitions, warnings, state, counts, lost };
}

describe('Recorder', () => {
  it('writes a start and the outcome that followed it in the same turn as one record, then settles it', async () => {
    const f = fakes();
    f.recorder.started(execution('1'), false);
    f.recorder.finished(outcome('1', 'succeeded'));
    await f.recorder.drain();
    expect(f.calls).toHaveLength(1);
    expect(f.calls[0]!.starts).toEqual([]);
    expect(f.calls[0]!.outcomes.map((o) => o.id)).toEqual(['1']);
    expect(f.settled).toEqual([{ lane: 'short', acks: [expect.objectContaining({ id: '1' })], dead: [], push: [] }]);
    expect(f.counts.succeeded).toBe(1);
    expect(f.transitions.map((t) => t.to)).toEqual(['running', 'succeeded']);
    expect(f.recorder.backlog).toBe(0);
  });

  it('records a start on its own, extends its lease while it runs, and forgets it once released', async () => {
    const f = fakes();
    f.recorder.started(execution('1'), false);
    await f.recorder.drain();
    expect(f.calls[0]!.starts.map((s) => s.id)).toEqual(['1']);
    expect(f.recorder.recordedClaims()).toEqual([{ id: '1', token: 't1', lane: 'short' }]);
    f.recorder.forget('1');
    expect(f.recorder.heldClaims()).toEqual([]);
  });

  it('stops an attempt whose start record lost its race, and writes nothing more for it', async () => {
    const f = fakes((input) => ({ started: new Set(), recorded: input.outcomes, rejected: [], retries: [] }));
    f.recorder.started(execution('1'), false);
    await f.recorder.drain();
    expect(f.lost).toEqual(['1']);
    f.recorder.finished(outcome('1', 'succeeded'));
    await f.recorder.drain();
    expect(f.calls).toHaveLength(1);
    expect(f.settled).toEqual([]);
  });

  it('settles a failed outcome by pushing its retry, and dead-letters a dead one', async () => {
    const f = fakes();
    for (const id of ['1', '2']) f.recorder.started(execution(id), true);
    f.recorder.finished(outcome('1', 'failed'));
    f.recorder.finished(outcome('2', 'dead'));
    await f.recorder.drain();
    expect(f.settled).toHaveLength(1);
    expect(f.settled[0]!.acks.map((a) => a.id)).toEqual(['1', '2']);
    expect(f.settled[0]!.dead).toEqual(['2']);
    expect(f.settled[0]!.push.map((p) => p.id)).toEqual(['1r']);
    expect(f.counts).toMatchObject({ failed: 1, dead: 1 });
  });

  it('counts and logs an outcome the store rejects (the attempt was reaped or cancelled) and still acknowledges it', async () => {
    const f = fakes((input) => ({ started: new Set(), recorded: [], rejected: input.outcomes, retries: [] }));
    f.recorder.started(execution('1'), true);
    f.recorder.finished(outcome('1', 'succeeded'));
    await f.recorder.drain();
    expect(f.counts.rejected).toBe(1);
    expect(f.warnings).toContainEqual(expect.objectContaining({ event: 'execution.outcome_rejected' }));
    expect(f.settled[0]!.acks.map((a) => a.id)).toEqual(['1']);
  });

  it('keeps outcomes while the database is away and writes them once it answers', async () => {
    const f = fakes();
    f.state.down = true;
    f.recorder.started(execution('1'), true);
    f.recorder.finished(outcome('1', 'succeeded'));
    const drained = f.recorder.drain();
    while (f.warnings.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(f.recorder.backlog).toBe(1);
    expect(f.recorder.heldClaims()).toEqual([{ id: '1', token: 't1', lane: 'short' }]);
    expect(f.warnings).toContainEqual(expect.objectContaining({ event: 'worker.record_failed' }));
    f.state.down = false;
    await drained;
    expect(f.calls.map((c) => c.outcomes.map((o) => o.id))).toEqual([['1']]);
    expect(f.recorder.backlog).toBe(0);
  });
});
