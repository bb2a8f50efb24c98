/**
 * @module cli/main — the `jobs` command line (`npm run jobs -- <command>`), on the typed client:
 * apply FILE [--dry-run] [--prune] [--owner NAME], list [--status S], get ID, trigger ID [--payload JSON],
 * pause ID, resume ID, logs EXECUTION_ID [--follow]. Returns the exit code; never calls process.exit.
 */
import { parseArgs } from 'node:util';
import { errorMessage, type JobsClient } from '../index';
import { DEFAULT_OWNER, formatPlan, planApply, runPlan } from './apply';
import { readSpecFile } from './spec-file';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Waits between polls of `logs --follow` (injected so tests need not sleep). */
  sleep?(ms: number): Promise<void>;
}

export const USAGE = `usage: npm run jobs -- <command>
  apply FILE [--dry-run] [--prune] [--owner NAME]   create or update the jobs of a JSON or YAML file
  list [--status active|paused]                     list jobs
  get ID                                            show a job
  trigger ID [--payload JSON]                       run a job now
  pause ID | resume ID                              pause or resume a job
  logs EXECUTION_ID [--follow]                      an execution's output (--follow: until it ends)
environment: JOBS_API_URL (default http://127.0.0.1:8080), JOBS_API_KEY`;

const FINAL = new Set(['succeeded', 'failed', 'dead', 'cancelled', 'skipped']);
const FOLLOW_POLL_MS = 1000;

export async function runCli(argv: string[], api: JobsClient, io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'dry-run': { type: 'boolean' },
        prune: { type: 'boolean' },
        owner: { type: 'string' },
        status: { type: 'string' },
        payload: { type: 'string' },
        follow: { type: 'boolean', short: 'f' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, arg] = positionals;
  if (values.help || !command) {
    (values.help ? io.out : io.err)(USAGE);
    return values.help ? 0 : 2;
  }
  const needArg = (what: string) => {
    if (arg) return false;
    io.err(`${command}: give ${what}\n${USAGE}`);
    return true;
  };
  try {
    switch (command) {
      case 'apply': {
        if (needArg('a FILE')) return 2;
        const file = await readSpecFile(arg!);
        const plan = await planApply(api, file, { prune: values.prune ?? false, owner: values.owner ?? DEFAULT_OWNER });
        io.out(formatPlan(plan));
        if (values['dry-run']) return plan.failures.length > 0 ? 1 : 0;
        const failures = await runPlan(api, plan);
        for (const f of failures) io.err(`FAILED     ${f.name}: ${f.reason}`);
        const applied = plan.steps.filter((s) => s.action !== 'unchanged').length - failures.length;
        io.out(`applied ${applied} change(s); ${plan.failures.length + failures.length} failed`);
        return plan.failures.length + failures.length > 0 ? 1 : 0;
      }
      case 'list': {
        const status = values.status as 'active' | 'paused' | undefined;
        const { data, error, response } = await api.GET('/api/v1/jobs', { params: { query: { status, limit: 200 } } });
        if (!data) return fail(io, errorMessage(error, response));
        for (const j of data.data) {
          io.out(
            [j.id, j.name, j.status, j.cron_expr ?? j.run_at ?? 'manual', `v${j.version}`, j.next_run_at ?? '-'].join(
              '\t',
            ),
          );
        }
        return 0;
      }
      case 'get': {
        if (needArg('a job ID')) return 2;
        const { data, error, response } = await api.GET('/api/v1/jobs/{id}', { params: { path: { id: arg! } } });
        if (!data) return fail(io, errorMessage(error, response));
        io.out(JSON.stringify(data, null, 2));
        return 0;
      }
      case 'trigger': {
        if (needArg('a job ID')) return 2;
        let payload: unknown;
        if (values.payload !== undefined) {
          try {
            payload = JSON.parse(values.payload);
          } catch {
            return fail(io, '--payload must be JSON', 2);
          }
        }
        const { data, error, response } = await api.POST('/api/v1/jobs/{id}/trigger', {
          params: { path: { id: arg! } },
          body: payload === undefined ? {} : { payload },
        });
        if (!data) return fail(io, errorMessage(error, response));
        io.out(`execution ${data.id} ${data.status}`);
        return 0;
      }
      case 'pause':
      case 'resume': {
        if (needArg('a job ID')) return 2;
        const path = command === 'pause' ? '/api/v1/jobs/{id}/pause' : '/api/v1/jobs/{id}/resume';
        const { data, error, response } = await api.POST(path, { params: { path: { id: arg! } } });
        if (!data) return fail(io, errorMessage(error, response));
        io.out(`${data.name} ${data.status}${data.next_run_at ? `, next run ${data.next_run_at}` : ''}`);
        return 0;
      }
      case 'logs':
        if (needArg('an EXECUTION_ID')) return 2;
        return await logs(api, io, arg!, values.follow ?? false);
      default:
        io.err(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    return fail(io, (error as Error).message);
  }
}

/** Prints an execution's output; with `follow`, polls until the execution is final, printing what is new. */
async function logs(api: JobsClient, io: CliIo, id: string, follow: boolean): Promise<number> {
  const sleep = io.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let printed = '';
  for (;;) {
    const { data, error, response } = await api.GET('/api/v1/executions/{id}', { params: { path: { id } } });
    if (!data) return fail(io, errorMessage(error, response));
    const output = data.output ?? '';
    // Output is capped head + tail: when it no longer extends what was printed, print it whole once more.
    if (output !== printed) io.out(output.startsWith(printed) ? output.slice(printed.length) : output);
    printed = output;
    if (!follow || FINAL.has(data.status)) {
      if (follow || FINAL.has(data.status))
        io.err(`execution ${id} ${data.status}${data.error ? `: ${data.error}` : ''}`);
      return data.status === 'failed' || data.status === 'dead' ? 1 : 0;
    }
    await sleep(FOLLOW_POLL_MS);
  }
}

function fail(io: CliIo, message: string, code = 1): number {
  io.err(message);
  return code;
}
