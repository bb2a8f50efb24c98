/**
 * @module cli/executions — the commands on executions: executions (filtered list), dead (the dead letters, and
 * replaying them), cancel, replay, logs.
 */
import type { components, Execution } from '../index';
import {
  call,
  CliError,
  emit,
  flag,
  idArg,
  isFatal,
  positiveInt,
  str,
  table,
  UsageError,
  type Command,
  type Ctx,
} from './context';
import { resolveJob } from './jobs';

type Summary = components['schemas']['ExecutionSummary'];
type Status = Execution['status'];

const STATUSES: readonly Status[] = [
  'queued',
  'retrying',
  'running',
  'succeeded',
  'failed',
  'dead',
  'cancelled',
  'skipped',
];
const FINAL = new Set<Status>(['succeeded', 'failed', 'dead', 'cancelled', 'skipped']);
const FOLLOW_POLL_MS = 1000;
const DEFAULT_LIMIT = 50;

/** Up to `limit` executions, newest first, page after page. */
async function listExecutions(
  ctx: Ctx,
  filter: { status?: Status; jobId?: string; limit: number },
): Promise<Summary[]> {
  const rows: Summary[] = [];
  let cursor: string | undefined;
  while (rows.length < filter.limit) {
    const page = await call(ctx, () =>
      ctx.api.GET('/api/v1/executions', {
        params: {
          query: {
            status: filter.status,
            job_id: filter.jobId,
            limit: Math.min(200, filter.limit - rows.length),
            cursor,
          },
        },
      }),
    );
    rows.push(...page.data);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return rows;
}

const seconds = (ms: number | null) => (ms === null ? null : `${(ms / 1000).toFixed(1)}s`);
const oneLine = (text: string | null) => (text ? text.replace(/\s+/g, ' ').slice(0, 120) : null);

const executions: Command = {
  name: 'executions',
  synopsis: '[--job JOB] [--status STATUS] [--limit N]',
  summary: 'list executions, newest first',
  help: [
    'columns: id, job id, status, trigger, attempt, scheduled for, duration, error',
    "--job JOB        only this job's (an id, or its name)",
    `--status STATUS  only executions in STATUS: ${STATUSES.join(', ')}`,
    `--limit N        at most N rows (default ${DEFAULT_LIMIT}; fetched 200 a page)`,
  ],
  options: { job: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
  args: [0, 0],
  async run(ctx, _args, values) {
    const status = str(values, 'status');
    if (status !== undefined && !STATUSES.includes(status as Status))
      throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
    const limit = positiveInt(str(values, 'limit'), 'limit', DEFAULT_LIMIT);
    const job = str(values, 'job');
    const jobId = job === undefined ? undefined : await resolveJob(ctx, job);
    const rows = await listExecutions(ctx, { status: status as Status | undefined, jobId, limit });
    emit(ctx, rows, () =>
      table(
        rows.map((e) => [
          e.id,
          e.job_id,
          e.status,
          e.trigger,
          e.attempt,
          e.scheduled_for,
          seconds(e.duration_ms),
          oneLine(e.error),
        ]),
      ),
    );
    return 0;
  },
};

const dead: Command = {
  name: 'dead',
  synopsis: '[--job JOB] [--limit N] [--replay]',
  summary: 'the dead letters (attempts that failed with no retry left); --replay replays them',
  help: [
    'columns: id, job id, attempt, finished at, replayed by, error',
    "--job JOB   only this job's (an id, or its name)",
    `--limit N   at most N rows (default ${DEFAULT_LIMIT})`,
    '--replay    replay each listed dead letter not replayed yet, as a new attempt chain',
  ],
  options: { job: { type: 'string' }, limit: { type: 'string' }, replay: { type: 'boolean' } },
  args: [0, 0],
  async run(ctx, _args, values) {
    const limit = positiveInt(str(values, 'limit'), 'limit', DEFAULT_LIMIT);
    const job = str(values, 'job');
    const jobId = job === undefined ? undefined : await resolveJob(ctx, job);
    const rows = await listExecutions(ctx, { status: 'dead', jobId, limit });
    if (!flag(values, 'replay')) {
      emit(ctx, rows, () =>
        table(rows.map((e) => [e.id, e.job_id, e.attempt, e.finished_at, e.replayed_by, oneLine(e.error)])),
      );
      return 0;
    }
    return replayAll(
      ctx,
      rows.filter((e) => e.replayed_by === null).map((e) => e.id),
      false,
    );
  },
};

const cancel: Command = {
  name: 'cancel',
  synopsis: 'EXECUTION...',
  summary: 'cancel queued, retrying or running executions (a running command is killed)',
  help: ['EXECUTION   execution ids; each is cancelled in turn, and each failure reported'],
  options: {},
  args: [1, Infinity],
  async run(ctx, ids) {
    return eachExecution(ctx, ids, async (id) => {
      const e = await call(ctx, () => ctx.api.POST('/api/v1/executions/{id}/cancel', { params: { path: { id } } }));
      return { result: e, line: `execution ${e.id} ${e.status}` };
    });
  },
};

const replay: Command = {
  name: 'replay',
  synopsis: 'EXECUTION... [--force]',
  summary: 'replay dead or failed executions as new attempt chains',
  help: [
    'EXECUTION   execution ids; each is replayed in turn, and each failure reported',
    '--force     replay again although the execution was replayed before',
  ],
  options: { force: { type: 'boolean' } },
  args: [1, Infinity],
  async run(ctx, ids, values) {
    return replayAll(ctx, ids, flag(values, 'force'));
  },
};

function replayAll(ctx: Ctx, ids: string[], force: boolean): Promise<number> {
  return eachExecution(ctx, ids, async (id) => {
    const e = await call(ctx, () =>
      ctx.api.POST('/api/v1/executions/{id}/replay', { params: { path: { id } }, body: { force } }),
    );
    return { result: { replayed: id, execution: e }, line: `execution ${id} replayed as ${e.id} (${e.status})` };
  });
}

/**
 * Runs one call per execution id, printing a line for each (or, with --json, a list of `{id, ok, result | error}`);
 * one that fails does not stop the others, but makes the exit code 1.
 */
async function eachExecution(
  ctx: Ctx,
  ids: string[],
  one: (id: string) => Promise<{ result: unknown; line: string }>,
): Promise<number> {
  for (const id of ids) idArg(id, 'EXECUTION');
  const results: unknown[] = [];
  let failed = 0;
  for (const id of ids) {
    try {
      const { result, line } = await one(id);
      results.push({ id, ok: true, result });
      if (!ctx.json) ctx.io.out(line);
    } catch (error) {
      if (!(error instanceof CliError) || isFatal(error)) throw error;
      failed++;
      results.push({ id, ok: false, error: { message: error.message, ...error.detail } });
      ctx.io.err(`execution ${id}: ${error.message}`);
    }
  }
  if (ctx.json) ctx.io.out(JSON.stringify(results, null, 2));
  if (!ctx.json && ids.length === 0) ctx.io.out('nothing to do');
  return failed > 0 ? 1 : 0;
}

const logs: Command = {
  name: 'logs',
  synopsis: 'EXECUTION [--follow]',
  summary: "an execution's output",
  help: [
    '--follow, -f   poll every second, printing new output, until the execution ends',
    'exit code 1 when the execution failed or is dead',
    '--json: {id, status, exit_code, error, output}; with --follow one JSON object a line: {"output": "..."} as it',
    '        comes, then the final {id, status, exit_code, error}',
  ],
  options: { follow: { type: 'boolean', short: 'f' } },
  args: [1, 1],
  async run(ctx, [id], values) {
    idArg(id!, 'EXECUTION');
    const follow = flag(values, 'follow');
    let printed = '';
    for (;;) {
      const e = await call(ctx, () => ctx.api.GET('/api/v1/executions/{id}', { params: { path: { id: id! } } }));
      const output = e.output ?? '';
      const final = FINAL.has(e.status);
      const end = { id: e.id, status: e.status, exit_code: e.exit_code, error: e.error };
      if (ctx.json && !follow) {
        ctx.io.out(JSON.stringify({ ...end, output }, null, 2));
      } else if (output !== printed) {
        // Output is capped head + tail: when it no longer extends what was printed, print it whole once more.
        const chunk = output.startsWith(printed) ? output.slice(printed.length) : output;
        ctx.io.out(ctx.json ? JSON.stringify({ output: chunk }) : chunk);
      }
      printed = output;
      if (!follow || final) {
        if (ctx.json && follow) ctx.io.out(JSON.stringify(end));
        else if (!ctx.json && (follow || final))
          ctx.io.err(`execution ${id} ${e.status}${e.error ? `: ${e.error}` : ''}`);
        return e.status === 'failed' || e.status === 'dead' ? 1 : 0;
      }
      await ctx.sleep(FOLLOW_POLL_MS);
    }
  },
};

export const executionCommands: Command[] = [executions, dead, cancel, replay, logs];
