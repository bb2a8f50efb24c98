/**
 * @module job-env — the names of a command job's environment: which of the worker's variables never reach a job,
 * and which the operator lets through (JOB_ENV_PASSTHROUGH).
 */

/**
 * Variables of the scheduler's own configuration that a job's command must never see, whatever JOB_ENV_PASSTHROUGH
 * says. SST_KEY decrypts the linked resources (the database and Redis passwords) that SST ships in a Lambda's bundle,
 * SST_KEY_FILE names that file; the ECS credentials URI would hand out the task role's credentials;
 * HTTP_SIGNING_SECRET would let a command forge requests that receivers trust as the scheduler's; SECRETS_KEY
 * decrypts every job's secrets.
 */
export const PRIVATE_ENV =
  /^(DATABASE_URL|DATABASE_APP_PASSWORD|REDIS_URL|API_KEYS|HTTP_SIGNING_SECRET|METRICS_TOKEN|SECRETS_KEY|SECRETS_KEY_PREVIOUS|OTEL_EXPORTER_OTLP_HEADERS|OTEL_EXPORTER_OTLP_TRACES_HEADERS|AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|AWS_ACCESS_KEY_ID|AWS_CONTAINER_CREDENTIALS_.*|AWS_CONTAINER_AUTHORIZATION_TOKEN.*|SST_KEY|SST_KEY_FILE|SST_RESOURCE_.*|JOBS_SECRETS_FD)$/;

/**
 * Which of the worker's variables a command also gets: `*` (everything but PRIVATE_ENV, the behaviour before the
 * environment was built), or names, each exact or a prefix ending in `*` (`AWS_REGION`, `PIP_*`).
 */
export type EnvPassthrough = '*' | readonly string[];

/** Whether `name` is let through by `passthrough`. */
export function passesThrough(name: string, passthrough: EnvPassthrough): boolean {
  if (passthrough === '*') return true;
  return passthrough.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : entry === name));
}
