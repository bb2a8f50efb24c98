/**
 * @module dashboard/pages/job-edit — `/jobs/:id/edit` (the create form, prefilled, validated the same way, with the
 * next fire times previewed) and `/jobs/:id/backfill` (a range of past fire times, previewed by a dry run, then
 * created). A refused form is shown again in place (400) with its values and problems.
 */
import { bodyChanges, specBody } from '@jobs/api';
import {
  backfillJob,
  ConflictError,
  InvalidInputError,
  keepMaskedHeaders,
  MAX_BACKFILL,
  updateJob,
  type Job,
} from '@jobs/core';
import { setFlash } from '../flash';
import { jobFormValues, jobFormValuesOf, jobSpecFromForm, type FieldErrors, type JobFormValues } from '../job-input';
import { renderPage } from '../render';
import { CsrfField, ZonedTime } from '../ui/components';
import { TextField } from '../ui/fields';
import { PageHeader } from '../ui/layout';
import type { DashRequest } from '../view';
import { loadJob } from './job';
import { JobForm } from './job-form';

function renderEdit(
  r: DashRequest,
  job: Job,
  values: JobFormValues,
  errors: FieldErrors,
  status: 200 | 400 | 409,
  preview = false,
) {
  const target = {
    action: `/jobs/${job.id}/edit`,
    submit: 'Save changes',
    cancel: `/jobs/${job.id}`,
    paused: 'Paused',
  };
  return renderPage(r.c, r.view, {
    title: `${Object.keys(errors).length > 0 ? 'Error: edit' : 'Edit'} ${job.name}`,
    status,
    body: (
      <>
        <PageHeader
          title={`Edit ${job.name}`}
          subtitle={`Job #${job.id}, version ${job.version}. A change applies to the attempts that start after it is saved; running ones finish as they started.`}
        />
        <JobForm view={r.view} values={values} errors={errors} preview={preview} target={target} />
      </>
    ),
  });
}

export async function editJobPage(r: DashRequest): Promise<Response> {
  const job = await loadJob(r);
  return renderEdit(r, job, jobFormValuesOf(job), {}, 200, true);
}

export async function editJobSubmit(r: DashRequest): Promise<Response> {
  const job = await loadJob(r);
  const values = jobFormValues(r.form);
  if (r.form.get('intent') === 'preview') return renderEdit(r, job, values, {}, 200, true);
  const { spec, errors } = jobSpecFromForm(values, r.deps.shortLaneMaxTimeoutMs, r.deps.targetPolicy);
  if (!spec) return renderEdit(r, job, values, errors, 400);
  try {
    const { job: saved, changed } = await updateJob(r.commands, {
      id: job.id,
      // The signed-in key's name, as every change records it (the API's, and the dashboard's create).
      actor: r.commands.actor?.keyName ?? 'dashboard',
      plan: (current) => {
        // The form has no field for it: a job an apply manages stays managed.
        const next = { ...keepMaskedHeaders(spec, current), managedBy: current.managedBy };
        return { spec: next, changes: bodyChanges(specBody(current), specBody(next)) };
      },
    });
    if (changed) setFlash(r.c, 'edited', saved.id, saved.version);
    else setFlash(r.c, 'edit-unchanged', saved.id);
    return r.c.redirect(`/jobs/${saved.id}`, 303);
  } catch (error) {
    if (error instanceof ConflictError)
      return renderEdit(r, job, values, { name: 'another live job has this name' }, 409);
    if (error instanceof InvalidInputError) {
      const field = (error.field ?? 'form') as keyof FieldErrors;
      return renderEdit(r, job, values, { [field in values ? field : 'form']: error.message }, 400);
    }
    throw error;
  }
}

interface BackfillState {
  from: string;
  to: string;
  errors: { from?: string; to?: string; form?: string };
  /** The dry run's fire times, and the executions some of them already have. */
  preview?: Date[];
  existing?: Map<number, string>;
}

function renderBackfill(r: DashRequest, job: Job, state: BackfillState, status: 200 | 400) {
  const problems = Object.entries(state.errors);
  return renderPage(r.c, r.view, {
    title: `${problems.length > 0 ? 'Error: backfill' : 'Backfill'} ${job.name}`,
    status,
    body: (
      <>
        <PageHeader
          title={`Backfill ${job.name}`}
          subtitle={`Runs the fire times the job had in a past range, by its own schedule and time zone (${job.timezone}); at most ${MAX_BACKFILL} at once. A fire time that already has an execution is skipped.`}
        />
        {problems.length > 0 && (
          <div class="error-summary" role="alert" id="error-summary" tabindex={-1} autofocus>
            <h2>{problems.length === 1 ? 'One problem to fix' : `${problems.length} problems to fix`}</h2>
            <ul>
              {problems.map(([field, message]) => (
                <li>{field === 'form' ? message : `${field === 'from' ? 'From' : 'To'}: ${message}`}</li>
              ))}
            </ul>
          </div>
        )}
        <form method="post" action={`/jobs/${job.id}/backfill`} class="stacked" novalidate>
          <CsrfField view={r.view} />
          <div class="field-row">
            <TextField
              name="from"
              label="From (inclusive)"
              value={state.from}
              error={state.errors.from}
              mono
              hint="An ISO 8601 instant, e.g. 2025-03-08T00:00:00Z."
            />
            <TextField
              name="to"
              label="To (exclusive)"
              value={state.to}
              error={state.errors.to}
              mono
              hint="Not after now."
            />
          </div>
          {state.preview && (
            <div id="backfill-preview" class="preview" aria-live="polite">
              <p class="hint">
                {state.preview.length === 0
                  ? 'No fire times in this range.'
                  : `${state.preview.length} fire time${state.preview.length === 1 ? '' : 's'} in this range:`}
              </p>
              {(state.existing?.size ?? 0) > 0 && (
                <p class="hint">
                  {state.existing!.size} of them already ran and will be skipped; the backfill creates{' '}
                  {state.preview.length - state.existing!.size}.
                </p>
              )}
              <ol>
                {state.preview.slice(0, 50).map((t) => {
                  const ran = state.existing?.get(t.getTime());
                  return (
                    <li>
                      <ZonedTime at={t} zone={job.timezone} />
                      {ran && (
                        <>
                          {' '}
                          (already ran: <a href={`/executions/${ran}`}>execution #{ran}</a>)
                        </>
                      )}
                    </li>
                  );
                })}
              </ol>
              {state.preview.length > 50 && <p class="hint">… and {state.preview.length - 50} more.</p>}
            </div>
          )}
          <div class="button-row">
            <button type="submit" class="btn" name="intent" value="preview">
              Preview (dry run)
            </button>
            <button type="submit" class="btn btn-primary" name="intent" value="run">
              Backfill
            </button>
            <a href={`/jobs/${job.id}`}>Cancel</a>
          </div>
        </form>
      </>
    ),
  });
}

export async function backfillPage(r: DashRequest): Promise<Response> {
  const job = await loadJob(r);
  const to = new Date(Math.floor(r.view.now.getTime() / 60_000) * 60_000);
  const from = new Date(to.getTime() - 86_400_000);
  return renderBackfill(r, job, { from: from.toISOString(), to: to.toISOString(), errors: {} }, 200);
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

export async function backfillSubmit(r: DashRequest): Promise<Response> {
  const job = await loadJob(r);
  const state: BackfillState = {
    from: (r.form.get('from') ?? '').trim().slice(0, 100),
    to: (r.form.get('to') ?? '').trim().slice(0, 100),
    errors: {},
  };
  for (const field of ['from', 'to'] as const) {
    if (!INSTANT.test(state[field]) || Number.isNaN(Date.parse(state[field])))
      state.errors[field] = 'must be an ISO 8601 instant with its offset';
  }
  if (Object.keys(state.errors).length > 0) return renderBackfill(r, job, state, 400);
  const dryRun = r.form.get('intent') !== 'run';
  try {
    const result = await backfillJob(r.commands, {
      jobId: job.id,
      from: new Date(state.from),
      to: new Date(state.to),
      dryRun,
    });
    if (dryRun) {
      const existing = new Map(result.existing.map((x) => [x.fireTime.getTime(), x.executionId]));
      return renderBackfill(r, job, { ...state, preview: result.fireTimes, existing }, 200);
    }
    setFlash(r.c, 'backfilled', job.id, result.created.length, result.fireTimes.length);
    return r.c.redirect(`/jobs/${job.id}`, 303);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const field = error.field === 'from' || error.field === 'to' ? error.field : 'form';
    return renderBackfill(r, job, { ...state, errors: { [field]: error.message } }, 400);
  }
}
