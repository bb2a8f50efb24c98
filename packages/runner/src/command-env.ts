/**
 * @module command-env — the environment a command job runs with. Built, not inherited: a variable on the worker's
 * host (a PGPASSWORD, a token the service manager exports) reaches a job only when JOB_ENV_PASSTHROUGH names it.
 */
import { PRIVATE_ENV, passesThrough, type EnvPassthrough, type StartedExecution } from '@jobs/core';

/** The text values of a job's `env` (references are resolved before a command runs, see secrets.ts). */
export function plainEnv(env: StartedExecution['env']): Record<string, string> | undefined {
  if (!env) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string') out[name] = value;
  return out;
}

/** PATH when the worker has none (the Debian default for a login shell). */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Variables every command gets from the worker when set: locale and, for the job user, who and where it is. */
const BASE_ENV = /^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|HOME|USER|LOGNAME)$/;

export interface CommandEnvOptions {
  /** The worker's environment (default: process.env). */
  base?: NodeJS.ProcessEnv;
  /** Default: none (the documented clean environment). */
  passthrough?: EnvPassthrough;
  /** The job's own variables, secrets already resolved; they win over everything but the JOB_* identity. */
  own?: Readonly<Record<string, string>>;
}

/**
 * The environment of one attempt's command: PATH, LANG/LC_*, HOME/USER/LOGNAME (the supervisor sets the job user's
 * when it switches user), the passed-through names, the job's own variables, then TZ (its job's zone), the JOB_*
 * identity and payload, and TRACEPARENT (the attempt's own, never one the worker inherited).
 */
export function commandEnv(execution: StartedExecution, options: CommandEnvOptions = {}): NodeJS.ProcessEnv {
  const base = options.base ?? process.env;
  const passthrough = options.passthrough ?? [];
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || PRIVATE_ENV.test(key)) continue;
    if (BASE_ENV.test(key) || passesThrough(key, passthrough)) env[key] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  delete env.TRACEPARENT;
  delete env.TRACESTATE;
  if (options.own) Object.assign(env, options.own);
  env.JOB_ID = execution.jobId;
  env.JOB_EXECUTION_ID = execution.id;
  env.JOB_ATTEMPT = String(execution.attempt);
  // 1, or more when this attempt was given back at a shutdown (or lost with its worker) and is running again.
  env.JOB_DELIVERY = String(execution.delivery ?? 1);
  env.JOB_SCHEDULED_FOR = execution.scheduledFor.toISOString();
  // The job's time zone, so `date` and the command's own clock agree with its schedule (the worker's is irrelevant).
  if (execution.timezone) env.TZ = execution.timezone;
  else if (base.TZ && !env.TZ) env.TZ = base.TZ;
  env.JOB_PAYLOAD = JSON.stringify(execution.payload ?? null);
  if (execution.traceparent) env.TRACEPARENT = execution.traceparent;
  return env;
}
