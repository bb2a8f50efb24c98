/**
 * @module cli/apply — jobs as code: the plan (create / update with the fields that change / unchanged / delete) of a
 * spec file against a deployment, and applying it through the REST API. The server computes each plan
 * (POST /jobs/by-name/{name}/plan), so defaults and validation are exactly those of the API.
 *
 * The API has no transactional batch, so an apply is all-or-nothing as far as validation goes: every spec is planned
 * (validated by the server, nothing written) first, and if any fails nothing is written. A write that fails after
 * that (a concurrent change, an outage) stops the apply, which then says exactly what it applied and what not.
 */
import { call, CliError, emit, flag, isFatal, str, type Command, type Ctx } from './context';
import { listAllJobs } from './jobs';
import { readSpecFile, type SpecFile } from './spec-file';

/** The marker an apply sets on the jobs it creates or updates: --prune only ever deletes jobs that carry it. */
const DEFAULT_OWNER = 'jobs-apply';

type Step =
  | {
      action: 'create' | 'update' | 'unchanged';
      name: string;
      jobId: string | null;
      changes: { field: string; old?: unknown; new?: unknown }[];
      body: Record<string, unknown>;
    }
  | { action: 'delete'; name: string; jobId: string };

interface Plan {
  steps: Step[];
  failures: { name: string; reason: string }[];
}

/** What a non-dry apply did: the steps it applied, the one that failed (if any), the ones it did not reach. */
interface Outcome {
  applied: Step[];
  failed: { step: Step; reason: string } | null;
  notApplied: Step[];
}

async function planApply(ctx: Ctx, file: SpecFile, options: { prune: boolean; owner: string }): Promise<Plan> {
  const plan: Plan = { steps: [], failures: file.invalid.map((i) => ({ name: i.entry, reason: i.reason })) };
  for (const spec of file.specs) {
    const body = { ...spec.body, managed_by: options.owner };
    try {
      const data = await call(ctx, () =>
        ctx.api.POST('/api/v1/jobs/by-name/{name}/plan', {
          params: { path: { name: spec.name } },
          body: body as never,
        }),
      );
      plan.steps.push({ action: data.action, name: spec.name, jobId: data.job_id, changes: data.changes, body });
    } catch (error) {
      // A spec the API refuses is this spec's failure; an unreachable API or a refused key ends the plan.
      if (isFatal(error)) throw error;
      plan.failures.push({ name: spec.name, reason: (error as CliError).message });
    }
  }
  if (options.prune) {
    const named = new Set(file.specs.map((s) => s.name));
    for (const job of await listAllJobs(ctx)) {
      if (job.managed_by === options.owner && !named.has(job.name))
        plan.steps.push({ action: 'delete', name: job.name, jobId: job.id });
    }
  }
  return plan;
}

/** Applies the plan's changes in order, stopping at the first that fails. */
async function runPlan(ctx: Ctx, plan: Plan): Promise<Outcome> {
  const changes = plan.steps.filter((s) => s.action !== 'unchanged');
  const outcome: Outcome = { applied: [], failed: null, notApplied: [] };
  for (const [i, step] of changes.entries()) {
    try {
      if (step.action === 'delete')
        await call(ctx, () => ctx.api.DELETE('/api/v1/jobs/{id}', { params: { path: { id: step.jobId } } }));
      else {
        const body = (step as Extract<Step, { body: unknown }>).body;
        const job = await call(ctx, () =>
          ctx.api.PUT('/api/v1/jobs/by-name/{name}', { params: { path: { name: step.name } }, body: body as never }),
        );
        step.jobId = job.id;
      }
      outcome.applied.push(step);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      // Without an answer the write may or may not have happened; a by-name PUT or a DELETE can safely be re-run.
      const unknown = error.detail.status === undefined ? ' (no answer: it may or may not have been applied)' : '';
      outcome.failed = { step, reason: `${error.message}${unknown}` };
      outcome.notApplied = changes.slice(i + 1);
      break;
    }
  }
  return outcome;
}

const PAD = 11;
const label = (action: string) => action.padEnd(PAD - 1);

/** The plan as text, one line per job (and one per changed field). */
function formatPlan(plan: Plan): string {
  const lines: string[] = [];
  for (const step of plan.steps) {
    if (step.action === 'delete') lines.push(`${label('delete')} ${step.name} (id ${step.jobId}, not in the file)`);
    else if (step.action === 'create') {
      lines.push(`${label('create')} ${step.name}`);
      // What it would be created with: the fields the file sets (the server's defaults for the rest).
      for (const c of step.changes)
        if (c.field in step.body && c.field !== 'managed_by' && c.field !== 'name')
          lines.push(`             ${c.field}: ${JSON.stringify(c.new)}`);
    } else if (step.action === 'unchanged') lines.push(`${label('unchanged')} ${step.name}`);
    else {
      lines.push(`${label('update')} ${step.name} (id ${step.jobId})`);
      for (const c of step.changes)
        lines.push(`             ${c.field}: ${JSON.stringify(c.old)} -> ${JSON.stringify(c.new)}`);
    }
  }
  for (const f of plan.failures) lines.push(`${label('FAILED')} ${f.name}: ${f.reason}`);
  return lines.join('\n');
}

/** "1 to create, 2 to update, 0 to delete, 3 unchanged, 1 failed" */
function planCounts(plan: Plan): string {
  const n = (a: Step['action']) => plan.steps.filter((s) => s.action === a).length;
  return (
    `${n('create')} to create, ${n('update')} to update, ${n('delete')} to delete, ${n('unchanged')} unchanged` +
    (plan.failures.length ? `, ${plan.failures.length} failed` : '')
  );
}

const past = { create: 'created', update: 'updated', delete: 'deleted', unchanged: 'unchanged' } as const;
const stepJson = (s: Step) =>
  s.action === 'delete'
    ? { action: s.action, name: s.name, job_id: s.jobId }
    : { action: s.action, name: s.name, job_id: s.jobId, changes: s.changes };

const apply: Command = {
  name: 'apply',
  synopsis: 'FILE [--dry-run] [--prune] [--owner NAME]',
  summary: 'create or update the jobs of a JSON or YAML file (all or nothing)',
  help: [
    'FILE         a list of job specs, or {"jobs": [...]}, each a PUT /jobs/by-name body with its "name"',
    '--dry-run    print the plan (what would be created, updated, deleted) and write nothing',
    '--prune      also delete the jobs an earlier apply (with the same --owner) created that FILE no longer names',
    '--owner NAME the mark set on the jobs it applies, and the only jobs --prune deletes (default jobs-apply)',
    'every spec is validated by the server first: if one fails nothing is written. A write that then fails stops',
    'the apply, which lists what it applied, what failed and what it did not reach; running it again is safe.',
  ],
  options: { 'dry-run': { type: 'boolean' }, prune: { type: 'boolean' }, owner: { type: 'string' } },
  args: [1, 1],
  async run(ctx, [path], values) {
    let file: SpecFile;
    try {
      file = await readSpecFile(path!);
    } catch (error) {
      throw new CliError((error as Error).message, 1, { code: 'bad_file' });
    }
    const owner = str(values, 'owner') ?? DEFAULT_OWNER;
    const dryRun = flag(values, 'dry-run');
    const plan = await planApply(ctx, file, { prune: flag(values, 'prune'), owner });
    const failed = plan.failures.length > 0;
    if (dryRun || failed) {
      const verdict = dryRun
        ? 'dry run: nothing was written'
        : 'nothing was applied: fix the failed spec(s) and run again';
      emit(ctx, { dry_run: dryRun, applied: false, steps: plan.steps.map(stepJson), failures: plan.failures }, () =>
        [`plan for ${path} (owner ${owner}):`, formatPlan(plan), `plan: ${planCounts(plan)}`, verdict].join('\n'),
      );
      return failed ? 1 : 0;
    }
    const outcome = await runPlan(ctx, plan);
    const n = (a: Step['action']) => outcome.applied.filter((s) => s.action === a).length;
    const unchanged = plan.steps.filter((s) => s.action === 'unchanged').length;
    emit(
      ctx,
      {
        dry_run: false,
        applied: outcome.failed === null,
        steps: plan.steps.map(stepJson),
        done: outcome.applied.map(stepJson),
        failed: outcome.failed && { ...stepJson(outcome.failed.step), reason: outcome.failed.reason },
        not_applied: outcome.notApplied.map(stepJson),
      },
      () => {
        const lines = [formatPlan(plan)];
        const summary = `${n('create')} created, ${n('update')} updated, ${n('delete')} deleted, ${unchanged} unchanged`;
        if (!outcome.failed) lines.push(`applied ${outcome.applied.length} change(s): ${summary}`);
        else {
          const { step, reason } = outcome.failed;
          lines.push(`FAILED     ${step.action} ${step.name}: ${reason}`);
          lines.push(`stopped: applied ${outcome.applied.length} change(s) before it (${summary})`);
          for (const s of outcome.applied) lines.push(`  ${past[s.action].padEnd(PAD - 2)} ${s.name}`);
          lines.push(`not applied: ${outcome.notApplied.length} change(s) after it`);
          for (const s of outcome.notApplied) lines.push(`  ${s.action.padEnd(PAD - 2)} ${s.name}`);
        }
        return lines.join('\n');
      },
    );
    return outcome.failed ? 1 : 0;
  },
};

export const applyCommands: Command[] = [apply];
