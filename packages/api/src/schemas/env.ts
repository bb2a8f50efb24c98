/**
 * @module schemas/env — a command job's own variables as the API takes and shows them, and secret references
 * (`{ "secret": name }`, optionally with a `format`), which the `env` of a command, the header values of an HTTP
 * target and the top-level payload fields of a Lambda target may hold. A reference is only a name: values never
 * pass through a job.
 */
import { z } from '@hono/zod-openapi';
import {
  MAX_ENV_BYTES,
  MAX_ENV_VALUE_CHARS,
  MAX_ENV_VARS,
  PRIVATE_ENV,
  SECRET_NAME,
  envNameProblem,
  isSecretRef,
} from '@jobs/core';

const SecretName = z
  .string()
  .regex(
    SECRET_NAME,
    'secret names are 1-100 lower-case letters, digits, ".", "_" and "-", starting with a letter or digit',
  )
  .openapi({ example: 'billing-db' });

const SecretRefInput = z
  .strictObject({
    secret: SecretName,
    format: z
      .string()
      .max(1000)
      .refine((f) => f.includes('{}'), 'must contain {} where the value goes, e.g. "Bearer {}"')
      .optional()
      .openapi({ example: 'Bearer {}', description: 'The value put in place of `{}`; default: the value alone.' }),
  })
  .openapi('SecretRef', {
    description: 'A named secret (PUT /secrets/{name}), resolved by the worker at each attempt; never stored here.',
  });

const EnvValueInput = z.union([
  z
    .string()
    .max(MAX_ENV_VALUE_CHARS)
    .refine((v) => !v.includes('\u0000'), 'values must not contain NUL'),
  SecretRefInput,
]);

export const JobEnvInput = z
  .record(z.string(), EnvValueInput)
  .superRefine((env, ctx) => {
    const names = Object.keys(env);
    if (names.length > MAX_ENV_VARS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_ENV_VARS} variables` });
    let bytes = 0;
    for (const name of names) {
      const problem = envNameProblem(name, PRIVATE_ENV);
      if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
      const value = env[name];
      bytes += Buffer.byteLength(name) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
    }
    if (bytes > MAX_ENV_BYTES)
      ctx.addIssue({ code: 'custom', message: `is ${bytes} bytes of names and values; the limit is ${MAX_ENV_BYTES}` });
  })
  .openapi('JobEnv', {
    example: { REPORT_BUCKET: 'reports', DB_PASSWORD: { secret: 'billing-db' } },
    description:
      'A command job\'s own variables: text, or `{"secret": name}` resolved at each attempt. Names match ^[A-Z_][A-Z0-9_]*$, not JOB_*, TRACEPARENT or the scheduler\'s own; at most 100 variables, 32 KiB a value, 128 KiB in all.',
  });

/**
 * The secrets a job's definition references: in its env, its HTTP headers, its Lambda payload's top-level fields.
 * @public Not called yet: the job secrets work wires it in; drop this tag then.
 */
export function jobSecretNames(job: {
  env?: Record<string, unknown> | null;
  http?: { headers: Record<string, unknown> } | null;
  lambda?: unknown;
  payload?: unknown;
}): string[] {
  const values: unknown[] = [...Object.values(job.env ?? {}), ...Object.values(job.http?.headers ?? {})];
  if (job.lambda && job.payload && typeof job.payload === 'object' && !Array.isArray(job.payload))
    values.push(...Object.values(job.payload));
  return [...new Set(values.filter(isSecretRef).map((ref) => ref.secret))];
}
