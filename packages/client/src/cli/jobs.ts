/**
 * @module cli/jobs — the commands on one job or the list of them: list, get, trigger, pause, resume, delete.
 * A job is named by its id or by its name (looked up in the list).
 */
import { readFile } from 'node:fs/promises';
import type { Job } from '../index';
import { call, CliError, emit, jsonArg, str, table, UsageError, type Command, type Ctx } from './context';

/** Every job, page after page. */
export async function listAllJobs(ctx: Ctx, status?: 'active' | 'paused'): Promise<Job[]> {
  const jobs: Job[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await call(ctx, () =>
      ctx.api.GET('/api/v1/jobs', { params: { query: { status, limit: 200, cursor } } }),
    );
    jobs.push(...page.data);
    if (!page.next_cursor) return jobs;
    cursor = page.next_cursor;
  }
}

/** The id of the job a command names: digits are an id, anything else a name found in the list. */
export async function resolveJob(ctx: Ctx, ref: string): Promise<string> {
  if (/^[1-9][0-9]{0,17}$/.test(ref)) return ref;
  const name = ref.trim().normalize('NFC');
  if (!name) throw new UsageError('give a job id or name');
  const job = (await listAllJobs(ctx)).find((j) => j.name === name);
  if (!job) throw new CliError(`no job named ${JSON.stringify(name)}`, 1, { code: 'not_found', status: 404 });
  return job.id;
}

const JOB = 'JOB is a job id, or its name';

const list: Command = {
  name: 'list',
  synopsis: '[--status active|paused]',
  summary: 'list jobs',
  help: [
    'columns: id, name, status, schedule, version, next run',
    '--status S   only jobs in status S (active or paused)',
  ],
  options: { status: { type: 'string' } },
  args: [0, 0],
  async run(ctx, _args, values) {
    const status = str(values, 'status');
    if (status !== undefined && status !== 'active' && status !== 'paused')
      throw new UsageError('--status must be active or paused');
    const jobs = await listAllJobs(ctx, status);
    emit(ctx, jobs, () =>
      table(
        jobs.map((j) => [j.id, j.name, j.status, j.cron_expr ?? j.run_at ?? 'manual', `v${j.version}`, j.next_run_at]),
      ),
    );
    return 0;
  },
};

const get: Command = {
  name: 'get',
  synopsis: 'JOB',
  summary: 'show a job',
  help: [JOB],
  options: {},
  args: [1, 1],
  async run(ctx, [ref]) {
    const id = await resolveJob(ctx, ref!);
    const job = await call(ctx, () => ctx.api.GET('/api/v1/jobs/{id}', { params: { path: { id } } }));
    ctx.io.out(JSON.stringify(job, null, 2));
    return 0;
  },
};

const trigger: Command = {
  name: 'trigger',
  synopsis: 'JOB [--payload JSON | --payload-file FILE] [--idempotency-key KEY]',
  summary: 'run a job now, with a payload',
  help: [
    JOB,
    '--payload JSON          the execution payload (any JSON, at most 64 KiB)',
    '--payload-file FILE     the payload read from a JSON file ("-": standard input)',
    '--idempotency-key KEY   a retried trigger with the same key returns the same execution',
  ],
  options: { payload: { type: 'string' }, 'payload-file': { type: 'string' }, 'idempotency-key': { type: 'string' } },
  args: [1, 1],
  async run(ctx, [ref], values) {
    const payload = await readPayload(str(values, 'payload'), str(values, 'payload-file'));
    const key = str(values, 'idempotency-key');
    const id = await resolveJob(ctx, ref!);
    const execution = await call(ctx, () =>
      ctx.api.POST('/api/v1/jobs/{id}/trigger', {
        params: { path: { id }, header: key === undefined ? undefined : { 'Idempotency-Key': key } },
        body: payload === undefined ? {} : { payload },
      }),
    );
    emit(ctx, execution, () => `execution ${execution.id} ${execution.status}`);
    return 0;
  },
};

async function readPayload(inline: string | undefined, file: string | undefined): Promise<unknown> {
  if (inline !== undefined && file !== undefined) throw new UsageError('give --payload or --payload-file, not both');
  if (inline !== undefined) return jsonArg(inline, 'payload');
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--payload-file: ${(error as Error).message}`);
  }
  return jsonArg(text, 'payload-file');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function pauseOrResume(name: 'pause' | 'resume'): Command {
  return {
    name,
    synopsis: 'JOB',
    summary: `${name} a job`,
    help: [JOB],
    options: {},
    args: [1, 1],
    async run(ctx, [ref]) {
      const id = await resolveJob(ctx, ref!);
      const path = name === 'pause' ? '/api/v1/jobs/{id}/pause' : '/api/v1/jobs/{id}/resume';
      const job = await call(ctx, () => ctx.api.POST(path, { params: { path: { id } } }));
      emit(ctx, job, () => `${job.name} ${job.status}${job.next_run_at ? `, next run ${job.next_run_at}` : ''}`);
      return 0;
    },
  };
}

const remove: Command = {
  name: 'delete',
  synopsis: 'JOB',
  summary: 'delete a job (no further runs; live executions cancelled; history kept)',
  help: [JOB],
  options: {},
  args: [1, 1],
  async run(ctx, [ref]) {
    const id = await resolveJob(ctx, ref!);
    const job = await call(ctx, () => ctx.api.GET('/api/v1/jobs/{id}', { params: { path: { id } } }));
    await call(ctx, () => ctx.api.DELETE('/api/v1/jobs/{id}', { params: { path: { id } } }));
    emit(ctx, { deleted: true, id, name: job.name }, () => `deleted ${job.name} (id ${id})`);
    return 0;
  },
};

export const jobCommands: Command[] = [list, get, trigger, pauseOrResume('pause'), pauseOrResume('resume'), remove];
