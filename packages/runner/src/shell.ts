/**
 * @module shell — runs a job's command with `/bin/sh -c` in its own process group, so a timeout or a cancel kills
 * the command and everything it started. stdout and stderr are captured together, capped.
 */
import { spawn } from 'node:child_process';
import type { RunResult, StartedExecution } from '@jobs/core';
import { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';

export interface ShellOptions {
  outputLimit?: number;
  /** Environment the command sees; secrets of the scheduler itself are removed (see `commandEnv`). */
  env?: NodeJS.ProcessEnv;
  /** After SIGTERM to the group, SIGKILL follows after this long. */
  killAfterMs?: number;
}

/**
 * Variables of the scheduler's own configuration that a job's command must never see. SST_KEY decrypts the linked
 * resources (the database and Redis passwords) that SST ships in a Lambda's bundle, SST_KEY_FILE names that file.
 */
const PRIVATE_ENV = /^(DATABASE_URL|REDIS_URL|API_KEYS|AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|SST_KEY|SST_KEY_FILE|SST_RESOURCE_.*)$/;

/** The parent's environment minus the scheduler's secrets, plus the execution's identity and payload. */
export function commandEnv(execution: StartedExecution, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (!PRIVATE_ENV.test(key)) env[key] = value;
  env.JOB_ID = execution.jobId;
  env.JOB_EXECUTION_ID = execution.id;
  env.JOB_ATTEMPT = String(execution.attempt);
  env.JOB_SCHEDULED_FOR = execution.scheduledFor.toISOString();
  env.JOB_PAYLOAD = JSON.stringify(execution.payload ?? null);
  return env;
}

export function runShell(
  command: string,
  execution: StartedExecution,
  signal: AbortSignal,
  options: ShellOptions = {},
): Promise<RunResult> {
  const output = new CappedOutput(options.outputLimit ?? DEFAULT_OUTPUT_LIMIT);
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve({ ok: false, exitCode: null, output: '', error: `not started: ${String(signal.reason)}` });
      return;
    }
    const child = spawn('/bin/sh', ['-c', command], {
      detached: true, // its own process group: kill(-pid) reaches grandchildren too
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env ?? commandEnv(execution),
    });
    let killTimer: NodeJS.Timeout | null = null;
    const kill = () => {
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), options.killAfterMs ?? 2000);
      killTimer.unref();
    };
    signal.addEventListener('abort', kill, { once: true });
    child.stdout.on('data', (chunk: Buffer) => output.write(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.write(chunk));
    child.on('error', (error) => {
      signal.removeEventListener('abort', kill);
      resolve({ ok: false, exitCode: null, output: output.toString(), error: `could not start command: ${error.message}` });
    });
    child.on('close', (code, killedBy) => {
      signal.removeEventListener('abort', kill);
      if (killTimer) clearTimeout(killTimer);
      // The shell may exit while a background grandchild still runs; never leave the group behind.
      killGroup(child.pid, 'SIGKILL');
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
}

function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, sig);
  } catch {
    // Already gone.
  }
}
