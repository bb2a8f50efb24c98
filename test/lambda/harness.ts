/**
 * Runs the Lambda handlers in this process the way a container does: configuration from process.env (pointing at
 * this test's schema and Redis prefix), one cached context per "container", reset between tests.
 */
import { createJob, type JobSpec } from '@jobs/core';
import { resetForTests } from '../../functions/lambda';
import { createTestEnv, type TestEnv } from '../support/env';
import { engine } from '../support/engine';
import { jobSpec } from '../support/fixtures';

export interface LambdaTestEnv extends TestEnv {
  /** Creates a job through the core command (as the API does). */
  job(overrides?: Partial<JobSpec>): ReturnType<typeof createJob>;
  /** Replaces the environment the next invocation's context is built from (the cached one is closed first). */
  setEnv(extra: Record<string, string | undefined>): Promise<void>;
  engine: ReturnType<typeof engine>;
}

/**
 * A test schema and prefix, with process.env pointed at them. `cleanup()` closes the cached Lambda context,
 * restores process.env and drops the schema and keys.
 */
export async function lambdaTestEnv(
  label: string,
  extra: Record<string, string | undefined> = {},
): Promise<LambdaTestEnv> {
  const env = await createTestEnv(label);
  const saved = { ...process.env };
  const e = engine(env);
  const apply = (vars: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(vars)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply({ ...env.childEnv, LOG_LEVEL: 'silent', EVENT_BUS_NAME: undefined, ...extra });
  return {
    ...env,
    engine: e,
    job: (overrides = {}) => createJob(e.deps, jobSpec(overrides)),
    async setEnv(vars) {
      await resetForTests();
      apply(vars);
    },
    async cleanup() {
      await resetForTests();
      await e.stopAll();
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
      await env.cleanup();
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
