/** Fixture factories: a job spec with sensible defaults, overridable field by field. */
import { DEFAULT_BACKOFF, type JobSpec } from '@jobs/core';
import { randomBytes } from 'node:crypto';

export function jobSpec(overrides: Partial<JobSpec> = {}): JobSpec {
  // A job runs exactly one target: the default handler gives way to any other target the test names.
  const otherTarget = Boolean(overrides.command || overrides.http || overrides.lambda);
  return {
    name: `job-${randomBytes(5).toString('hex')}`,
    cronExpr: null,
    timezone: 'UTC',
    runAt: null,
    command: null,
    handler: otherTarget ? null : 'noop',
    payload: null,
    maxRetries: 3,
    backoff: { ...DEFAULT_BACKOFF, baseMs: 50, maxMs: 1000 },
    timeoutMs: 10_000,
    overlap: 'allow',
    misfire: 'run_once',
    catchUpMax: 10,
    misfireDeadlineMs: null,
    lane: 'short',
    priority: 0,
    ...overrides,
  };
}
