/**
 * @module shell — runs a job's command with `/bin/sh -c` in its job's time zone, capturing stdout and stderr
 * together, each stderr line marked (see stream-lines.ts), capped.
 *
 * Supervised (the normal case on Linux), the command runs under `jobs-supervise`, spawned with a pipe on its stdin:
 * a cancel or timeout writes `T` (SIGTERM to every process of the attempt, SIGKILL after `killAfterMs`), and when the
 * worker dies by any signal the pipe's EOF makes the supervisor kill them all. The attempt ends when the shell exits:
 * the supervisor then kills what the shell left behind (background children, `setsid` grandchildren) and exits with
 * the shell's status. Unsupervised (no supervisor built), the command gets its own process group, which is killed on
 * cancel, timeout and exit; a process that leaves the group, or any process when the worker is SIGKILLed, survives.
 */
import { spawn } from 'node:child_process';
import type { LiveOutputSink, RunResult, StartedExecution } from '@jobs/core';
import { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';
import { StreamLines } from './stream-lines';
import type { Supervision } from './supervisor';

export interface ShellOptions {
  outputLimit?: number;
  /** Where a running attempt's output also goes as it is printed (GET /executions/{id}/output); absent: nowhere. */
  liveOutput?: LiveOutputSink | null;
  /** Environment the command sees; secrets of the scheduler itself are removed (see `commandEnv`). */
  env?: NodeJS.ProcessEnv;
  /** After SIGTERM, SIGKILL follows after this long. */
  killAfterMs?: number;
  /** Run under the supervisor (null or absent: unsupervised, see the module header). */
  supervision?: Supervision | null;
}

/** Unsupervised: how long output pipes may stay open after the shell exited (a process that left its group). */
const PIPE_DRAIN_MS = 500;

/**
 * Variables of the scheduler's own configuration that a job's command must never see. SST_KEY decrypts the linked
 * resources (the database and Redis passwords) that SST ships in a Lambda's bundle, SST_KEY_FILE names that file;
 * the ECS credentials URI would hand out the task role's credentials; HTTP_SIGNING_SECRET would let a command forge
 * requests that receivers trust as the scheduler's.
 */
const PRIVATE_ENV =
  /^(DATABASE_URL|REDIS_URL|API_KEYS|HTTP_SIGNING_SECRET|METRICS_TOKEN|OTEL_EXPORTER_OTLP_HEADERS|OTEL_EXPORTER_OTLP_TRACES_HEADERS|AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|AWS_ACCESS_KEY_ID|AWS_CONTAINER_CREDENTIALS_.*|AWS_CONTAINER_AUTHORIZATION_TOKEN.*|SST_KEY|SST_KEY_FILE|SST_RESOURCE_.*|JOBS_SECRETS_FD)$/;

/** The parent's environment minus the scheduler's secrets, plus the execution's identity and payload. */
export function commandEnv(execution: StartedExecution, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (!PRIVATE_ENV.test(key)) env[key] = value;
  env.JOB_ID = execution.jobId;
  env.JOB_EXECUTION_ID = execution.id;
  env.JOB_ATTEMPT = String(execution.attempt);
  // 1, or more when this attempt was given back at a shutdown (or lost with its worker) and is running again.
  env.JOB_DELIVERY = String(execution.delivery ?? 1);
  env.JOB_SCHEDULED_FOR = execution.scheduledFor.toISOString();
  // The job's time zone, so `date` and the command's own clock agree with its schedule (the worker's is irrelevant).
  if (execution.timezone) env.TZ = execution.timezone;
  env.JOB_PAYLOAD = JSON.stringify(execution.payload ?? null);
  // The attempt's own trace context, never one the worker process happened to inherit.
  delete env.TRACEPARENT;
  delete env.TRACESTATE;
  if (execution.traceparent) env.TRACEPARENT = execution.traceparent;
  return env;
}

export function runShell(
  command: string,
  execution: StartedExecution,
  signal: AbortSignal,
  options: ShellOptions = {},
): Promise<RunResult> {
  const live = options.liveOutput ?? null;
  const output = new CappedOutput(
    options.outputLimit ?? DEFAULT_OUTPUT_LIMIT,
    live ? { onChunk: (chunk) => live.append(execution.id, chunk) } : {},
  );
  const killAfterMs = options.killAfterMs ?? 2000;
  const supervision = options.supervision ?? null;
  const done = new Promise<RunResult>((resolve) => {
    if (signal.aborted) {
      resolve({ ok: false, exitCode: null, output: '', error: `not started: ${String(signal.reason)}` });
      return;
    }
    const [program, args] = supervision
      ? [
          supervision.path,
          [
            ...(supervision.user ? ['--user', supervision.user] : []),
            '--kill-after',
            String(killAfterMs),
            '--',
            '/bin/sh',
            '-c',
            command,
          ],
        ]
      : ['/bin/sh', ['-c', command]];
    const child = spawn(program, args, {
      // Its own session: a Ctrl-C meant for the worker does not reach the command (and kill(-pid) reaches its group).
      detached: true,
      stdio: [supervision ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      env: options.env ?? commandEnv(execution),
    });
    // The supervisor may exit before a late 'T' is written; the write error is expected then.
    child.stdin?.on('error', () => undefined);
    let killTimer: NodeJS.Timeout | null = null;
    let drainTimer: NodeJS.Timeout | null = null;
    const kill = () => {
      if (supervision) {
        child.stdin?.write('T');
        return;
      }
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), killAfterMs);
      killTimer.unref();
    };
    signal.addEventListener('abort', kill, { once: true });
    // One text, each stderr line marked (see stream-lines.ts): kept interleaved, and every line attributable.
    const lines = new StreamLines((chunk) => output.write(chunk));
    child.stdout!.on('data', (chunk: Buffer) => lines.write('stdout', chunk));
    child.stderr!.on('data', (chunk: Buffer) => lines.write('stderr', chunk));
    child.on('error', (error) => {
      signal.removeEventListener('abort', kill);
      resolve({
        ok: false,
        exitCode: null,
        output: (lines.end(), output.toString()),
        error: `could not start command: ${error.message}`,
      });
    });
    child.on('exit', () => {
      if (supervision) return; // the supervisor exits only once every process of the attempt is gone
      // The attempt ends with the shell: its group goes now, and pipes a process outside it still holds are cut.
      killGroup(child.pid, 'SIGKILL');
      drainTimer = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, PIPE_DRAIN_MS);
      drainTimer.unref();
    });
    child.on('close', (code, killedBy) => {
      signal.removeEventListener('abort', kill);
      if (killTimer) clearTimeout(killTimer);
      if (drainTimer) clearTimeout(drainTimer);
      child.stdin?.destroy();
      lines.end();
      const text = output.toString();
      if (signal.aborted) {
        resolve({ ok: false, exitCode: code, output: text, error: `killed (${String(signal.reason)})` });
      } else if (code === 0) {
        resolve({ ok: true, exitCode: 0, output: text, error: null });
      } else {
        const error = killedBy ? `killed by signal ${killedBy}` : `exit code ${code}`;
        resolve({ ok: false, exitCode: code, output: text, error });
      }
    });
  });
  return live ? done.finally(() => live.end(execution.id)) : done;
}

function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, sig);
  } catch {
    // Already gone.
  }
}
