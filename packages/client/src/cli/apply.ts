/**
 * @module cli/apply — jobs as code: the plan (create / update with the fields that change / unchanged / delete) of a
 * spec file against a deployment, and applying it through the REST API. The server computes each plan
 * (POST /jobs/by-name/{name}/plan), so defaults and validation are exactly those of the API.
 */
import { errorMessage, type JobsClient } from '../index';
import type { SpecFile } from './spec-file';

/** The marker an apply sets on the jobs it creates or updates: --prune only ever deletes jobs that carry it. */
export const DEFAULT_OWNER = 'jobs-apply';

export type Step =
  | {
      action: 'create' | 'update' | 'unchanged';
      name: string;
      changes: { field: string; old?: unknown; new?: unknown }[];
      body: Record<string, unknown>;
    }
  | { action: 'delete'; name: string; jobId: string };

export interface Plan {
  steps: Step[];
  failures: { name: string; reason: string }[];
}

export async function planApply(
  api: JobsClient,
  file: SpecFile,
  options: { prune: boolean; owner: string },
): Promise<Plan> {
  const plan: Plan = { steps: [], failures: file.invalid.map((i) => ({ name: i.entry, reason: i.reason })) };
  for (const spec of file.specs) {
    const body = { ...spec.body, managed_by: options.owner };
    const { data, error, response } = await api.POST('/api/v1/jobs/by-name/{name}/plan', {
      params: { path: { name: spec.name } },
      body: body as never,
    });
    if (!data) plan.failures.push({ name: spec.name, reason: errorMessage(error, response) });
    else plan.steps.push({ action: data.action, name: spec.name, changes: data.changes, body });
  }
  if (options.prune) {
    const named = new Set(file.specs.map((s) => s.name));
    for (const job of await listAllJobs(api)) {
      if (job.managed_by === options.owner && !named.has(job.name))
        plan.steps.push({ action: 'delete', name: job.name, jobId: job.id });
    }
  }
  return plan;
}

export async function runPlan(api: JobsClient, plan: Plan): Promise<Plan['failures']> {
  const failures: Plan['failures'] = [];
  for (const step of plan.steps) {
    if (step.action === 'unchanged') continue;
    const result =
      step.action === 'delete'
        ? await api.DELETE('/api/v1/jobs/{id}', { params: { path: { id: step.jobId } } })
        : await api.PUT('/api/v1/jobs/by-name/{name}', {
            params: { path: { name: step.name } },
            body: step.body as never,
          });
    if (result.error !== undefined || !result.response.ok)
      failures.push({ name: step.name, reason: errorMessage(result.error, result.response) });
  }
  return failures;
}

/** The plan as text, one line per job (and one per changed field). */
export function formatPlan(plan: Plan): string {
  const lines: string[] = [];
  for (const step of plan.steps) {
    if (step.action === 'delete') lines.push(`delete     ${step.name} (id ${step.jobId}, not in the file)`);
    else if (step.action === 'create') lines.push(`create     ${step.name}`);
    else if (step.action === 'unchanged') lines.push(`unchanged  ${step.name}`);
    else {
      lines.push(`update     ${step.name}`);
      for (const c of step.changes)
        lines.push(`             ${c.field}: ${JSON.stringify(c.old)} -> ${JSON.stringify(c.new)}`);
    }
  }
  for (const f of plan.failures) lines.push(`FAILED     ${f.name}: ${f.reason}`);
  return lines.join('\n');
}

async function listAllJobs(api: JobsClient) {
  const jobs = [];
  let cursor: string | undefined;
  for (;;) {
    const { data, error, response } = await api.GET('/api/v1/jobs', { params: { query: { limit: 200, cursor } } });
    if (!data) throw new Error(`listing jobs: ${errorMessage(error, response)}`);
    jobs.push(...data.data);
    if (!data.next_cursor) return jobs;
    cursor = data.next_cursor;
  }
}
