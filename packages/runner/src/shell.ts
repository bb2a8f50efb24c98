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
import type { EnvPassthrough, LiveOutputSink, RunResult, StartedExecution } from '@jobs/core';
import { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';
import { StreamLines } from './stream-lines';
import type { Supervision } from './supervisor';
import { commandEnv, plainEnv } from './command-env';

export interface ShellOptions {
  outputLimit?: number;
  /** Where a running attempt's output also goes as it is printed (GET /executions/{id}/output); absent: nowhere. */
  liveOutput?: LiveOutputSink | null;
  /** Environment the command sees (default: `commandEnv` of the execution, see command-env.ts). */
  env?: NodeJS.ProcessEnv;
  /** The worker's variables a command gets besides the built ones (JOB_ENV_PASSTHROUGH; default: none). */
  envPassthrough?: EnvPassthrough;
  /** After SIGTERM, SIGKILL follows after this long. */
  killAfterMs?: number;
  /** Run under the supervisor (null or absent: unsupervised, see the module header). */
  supervision?: Supervision | null;
}

/** Unsupervised: how long output pipes may stay open after the shell exited (a process that left its group). */
const PIPE_DRAIN_MS = 500;

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
      env:
        options.env ??
        commandEnv(execution, { passthrough: options.envPassthrough ?? [], own: plainEnv(execution.env) }),
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
