/**
 * Jobs as code for the SST app: `jobs.json` beside sst.config.ts (another file with JOBS_FILE), a list of
 * PUT /jobs/by-name bodies, applied on every deploy after the migrations by invoking the API function directly
 * (functions/api.ts `applyOnDeploy`): jobs it lists are created or replaced, jobs an earlier deploy created that it no
 * longer lists are deleted, jobs made otherwise are left alone. An invalid spec fails the deploy. No file: nothing is
 * applied (and nothing pruned); under `sst dev`, run `npm run jobs -- apply jobs.json` instead.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { apiFunction } from './api';
import { migration } from './migrate';

/** The file's job specs, or null when there is no file; throws (failing the deploy) on a file that is not a list. */
export function readJobsFile(path: string): unknown[] | null {
  if (!existsSync(path)) return null;
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: not valid JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(document) ? document : (document as { jobs?: unknown } | null)?.jobs;
  if (!Array.isArray(list)) throw new Error(`${path}: expected a list of job specs, or an object with a "jobs" list`);
  return list;
}

const jobs = readJobsFile(resolve(process.env.JOBS_FILE ?? 'jobs.json'));

export const jobsOnDeploy =
  $dev || !migration || jobs === null
    ? undefined
    : new aws.lambda.Invocation(
        'ApplyJobsOnDeploy',
        {
          // The function's name is an output of its resource: the invocation runs its new code.
          functionName: apiFunction.name,
          input: JSON.stringify({ source: 'deploy', jobs }),
          triggers: { deployedAt: new Date().toISOString() },
        },
        { dependsOn: [migration] },
      );
