/**
 * @module apply-specs — jobs as code without HTTP: a list of PUT /jobs/by-name bodies applied with the same validation
 * and the same upsert, by the deploy (functions/api.ts `applyOnDeploy`, from the SST app's jobs.json). Jobs it
 * creates are marked with `owner`; with `prune`, live jobs marked with it that the list no longer names are deleted.
 */
import { deleteJob, upsertJobByName, type CommandDeps } from '@jobs/core';
import type { ApiDeps } from './deps';
import { toApiError, zodDetails } from './errors';
import { putInput, replacePlan } from './routes/job-edits';
import { JobPut } from './schemas/jobs';
import { toJobSpec } from './serializers';

export interface SpecResult {
  name: string;
  action: 'created' | 'updated' | 'unchanged' | 'deleted' | 'failed';
  error?: string;
}

export async function applyJobSpecs(
  deps: ApiDeps,
  commands: CommandDeps,
  input: { specs: unknown[]; owner: string; actor: string; prune: boolean },
): Promise<SpecResult[]> {
  const results: SpecResult[] = [];
  const named = new Set<string>();
  for (const [i, entry] of input.specs.entries()) {
    const label =
      typeof (entry as { name?: unknown })?.name === 'string' ? (entry as { name: string }).name : `#${i + 1}`;
    try {
      const parsed = JobPut.safeParse({ ...(entry as object), managed_by: input.owner });
      if (!parsed.success || typeof parsed.data.name !== 'string') {
        const details = parsed.success ? [{ path: 'name', message: 'is required' }] : zodDetails(parsed.error, 'body');
        throw new Error(details.map((d) => `${d.path}: ${d.message}`).join('; '));
      }
      const { name, body } = putInput(parsed.data.name, parsed.data);
      if (named.has(name)) throw new Error('this name is given more than once');
      named.add(name);
      const result = await upsertJobByName(commands, {
        name,
        actor: input.actor,
        spec: toJobSpec(body, deps.shortLaneMaxTimeoutMs, deps.targetPolicy),
        allowPast: body.allow_past,
        plan: (current) => replacePlan(current, body, deps.shortLaneMaxTimeoutMs, deps.targetPolicy),
      });
      results.push({ name, action: result.created ? 'created' : result.changed ? 'updated' : 'unchanged' });
    } catch (error) {
      results.push({ name: label, action: 'failed', error: toApiError(error)?.message ?? (error as Error).message });
    }
  }
  // A list with failures prunes nothing: a spec that failed validation must not delete the job it describes.
  if (input.prune && results.every((r) => r.action !== 'failed')) {
    for (const job of await liveJobs(deps)) {
      if (job.managedBy !== input.owner || named.has(job.name)) continue;
      await deleteJob(commands, job.id);
      results.push({ name: job.name, action: 'deleted' });
    }
  }
  return results;
}

async function liveJobs(deps: ApiDeps) {
  const all = [];
  let before: string | undefined;
  for (;;) {
    const page = await deps.store.jobList({ before, limit: 500 });
    all.push(...page);
    if (page.length < 500) return all;
    before = page[page.length - 1]!.id;
  }
}
