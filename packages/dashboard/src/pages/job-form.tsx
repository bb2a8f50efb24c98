/**
 * @module dashboard/pages/job-form — `/jobs/new` and `POST /jobs`: create a job. The schedule preview is rendered by
 * the server (a "Preview schedule" button works without JS) and fetched as a fragment while the user types.
 * A refused or previewed form redirects to `/jobs/new?draft=<id>` (Post/Redirect/Get, see draft.ts), so reloading
 * the page never posts the form again.
 */
import { ConflictError, createJob, LANES, MISFIRE_POLICIES, OVERLAP_POLICIES } from '@jobs/core';
import type { FC } from 'hono/jsx';
import { clearCookie, readCookie, writeCookie } from '../cookies';
import { describeCron } from '../cron-words';
import { newDraftId, openDraft, sealDraft } from '../draft';
import { setFlash } from '../flash';
import {
  JOB_FORM_DEFAULTS,
  jobFormValues,
  jobSpecFromForm,
  previewSchedule,
  type FieldErrors,
  type JobField,
  type JobFormValues,
} from '../job-input';
import { renderFragment, renderPage } from '../render';
import { CsrfField, ZonedTime } from '../ui/components';
import { CheckField, fieldId, GroupedSelectField, SelectField, TextArea, TextField } from '../ui/fields';
import { PageHeader } from '../ui/layout';
import { TARGET_LABELS, TARGET_ORDER, TargetFields } from '../ui/target-fields';
import type { DashRequest, View } from '../view';
import { instantToWallTime, isWallTime } from '../wall-time';

const LABELS: Record<string, string> = {
  ...TARGET_LABELS,
  name: 'Name',
  cron_expr: 'Cron expression',
  timezone: 'Time zone',
  run_at: 'Run once at',
  max_retries: 'Retries',
  timeout_seconds: 'Timeout',
  lane: 'Lane',
  priority: 'Priority',
  handler: 'Handler',
  payload: 'Payload',
  overlap: 'Overlap',
  misfire: 'Misfire policy',
  catch_up_max: 'Catch-up limit',
  misfire_deadline_seconds: 'Misfire deadline',
  backoff_base_seconds: 'Backoff base',
  backoff_factor: 'Backoff factor',
  backoff_max_seconds: 'Backoff ceiling',
  backoff_jitter: 'Jitter',
  max_concurrency: 'Max concurrency',
  concurrency_key: 'Concurrency key',
  max_concurrency_per_key: 'Max per key',
  rate_limit_limit: 'Rate limit',
  rate_limit_period_seconds: 'Rate period',
  rate_limit_per_key: 'Rate per key',
  start_paused: 'Start paused',
  form: 'Job',
};

/** "Time zone: unknown time zone …", but not "Cron expression: Cron expression … never fires". */
function withLabel(field: string, message: string): string {
  const label = LABELS[field] ?? field;
  return message.toLowerCase().startsWith(label.toLowerCase()) ? message : `${label}: ${message}`;
}

let zones: [string, string[]][] | null = null;
/** The IANA zones this Node knows, UTC first, then grouped by region (Africa, America, …). */
function timeZoneGroups(): [string, string[]][] {
  if (zones) return zones;
  const byRegion = new Map<string, string[]>([['', ['UTC']]]);
  for (const zone of Intl.supportedValuesOf('timeZone')) {
    if (zone === 'UTC') continue;
    const region = zone.includes('/') ? zone.slice(0, zone.indexOf('/')) : 'Other';
    byRegion.set(region, [...(byRegion.get(region) ?? []), zone]);
  }
  zones = [...byRegion];
  return zones;
}

/**
 * What the run-once input shows: the value as typed when it is a wall time (or not a time at all, so the error
 * beside it makes sense); an instant with an offset (a draft, or a value posted without the input) as its wall time
 * in the zone, which is what a `datetime-local` input can hold.
 */
function runAtShown(value: string, zone: string): string {
  if (value.trim() === '' || isWallTime(value)) return value;
  const at = new Date(value);
  const shown = Number.isNaN(at.getTime()) ? '' : instantToWallTime(at, zone.trim() || 'UTC');
  return shown || value;
}

const SchedulePreviewView: FC<{ cronExpr: string; timezone: string; now: Date }> = ({ cronExpr, timezone, now }) => {
  const preview = previewSchedule(cronExpr, timezone, now);
  if (preview.kind === 'none')
    return <p class="hint">No cron expression: the job runs only when triggered (or once, at “Run once at”).</p>;
  if (preview.kind === 'error') return <p class="field-error">{withLabel(preview.field, preview.message)}</p>;
  const zone = timezone.trim() || 'UTC';
  const words = describeCron(cronExpr);
  return (
    <div>
      <p class="hint">
        {words ? <strong>{words}</strong> : 'Valid expression'} ({zone}). Next fire times:
      </p>
      <ol>
        {preview.times.map((t) => (
          <li>
            <ZonedTime at={t} zone={zone} />
          </li>
        ))}
      </ol>
    </div>
  );
};

/** Every field in the order the form shows it: the list of problems follows it. */
const PAGE_ORDER: readonly (JobField | 'form')[] = [
  'form',
  'name',
  ...TARGET_ORDER,
  'cron_expr',
  'timezone',
  'run_at',
  'max_retries',
  'timeout_seconds',
  'lane',
  'priority',
  'handler',
  'overlap',
  'misfire',
  'catch_up_max',
  'misfire_deadline_seconds',
  'backoff_base_seconds',
  'backoff_factor',
  'backoff_max_seconds',
  'backoff_jitter',
  'payload',
  'max_concurrency',
  'concurrency_key',
  'max_concurrency_per_key',
  'rate_limit_limit',
  'rate_limit_period_seconds',
  'rate_limit_per_key',
  'start_paused',
];

/** Fields under "Advanced": the section opens by itself when one of them has an error. */
const ADVANCED: readonly JobField[] = [
  'handler',
  'payload',
  'overlap',
  'misfire',
  'catch_up_max',
  'misfire_deadline_seconds',
  'backoff_base_seconds',
  'backoff_factor',
  'backoff_max_seconds',
  'backoff_jitter',
  'start_paused',
];

/** Fields under "Flow limits": the section opens by itself when one of them has an error or a value. */
const LIMITS: readonly JobField[] = [
  'max_concurrency',
  'concurrency_key',
  'max_concurrency_per_key',
  'rate_limit_limit',
  'rate_limit_period_seconds',
  'rate_limit_per_key',
];

const options = (values: readonly string[]): [string, string][] => values.map((v) => [v, v]);

/** Where the form posts and what its buttons say: the create form, or the same form editing a job. */
export interface FormTarget {
  action: string;
  submit: string;
  cancel: string;
  /** The status checkbox's label ("Create paused", or "Paused" when editing). */
  paused: string;
}

const CREATE: FormTarget = { action: '/jobs', submit: 'Create job', cancel: '/jobs', paused: 'Create paused' };

export const JobForm: FC<{
  view: View;
  values: JobFormValues;
  errors: FieldErrors;
  preview: boolean;
  target?: FormTarget;
}> = ({ view, values: v, errors: e, preview, target = CREATE }) => {
  const problems = PAGE_ORDER.flatMap((field) => (e[field] === undefined ? [] : [[field, e[field]] as const]));
  return (
    <>
      {problems.length > 0 && (
        <div class="error-summary" role="alert" id="error-summary" tabindex={-1} autofocus>
          <h2>{problems.length === 1 ? 'One problem to fix' : `${problems.length} problems to fix`}</h2>
          <ul>
            {problems.map(([field, message]) => (
              <li>{field === 'form' ? message : <a href={`#${fieldId(field)}`}>{withLabel(field, message)}</a>}</li>
            ))}
          </ul>
        </div>
      )}
      <form method="post" action={target.action} class="stacked" data-preview="/jobs/preview" novalidate>
        <CsrfField view={view} />
        <fieldset>
          <legend>What to run</legend>
          <div class="stacked-fields">
            <TextField
              name="name"
              label="Name"
              value={v.name}
              required
              error={e.name}
              hint="Unique among jobs; up to 200 characters."
            />
            <TargetFields values={v} errors={e} />
          </div>
        </fieldset>
        <fieldset>
          <legend>When</legend>
          <div class="field-row">
            <TextField
              name="cron_expr"
              label="Cron expression"
              value={v.cron_expr}
              error={e.cron_expr}
              mono
              placeholder="*/5 * * * *"
              hint="5 fields, or 6 with leading seconds, or @hourly, @daily… Empty: manual only."
            />
            <GroupedSelectField
              name="timezone"
              label="Time zone"
              value={v.timezone}
              error={e.timezone}
              groups={timeZoneGroups()}
              hint="The IANA zone the cron expression and the run-once time are read in."
            />
            <TextField
              name="run_at"
              label="Run once at"
              type="datetime-local"
              step={1}
              value={runAtShown(v.run_at, v.timezone)}
              error={e.run_at}
              hint="Instead of a cron expression: a date and time in the time zone beside it. Empty for a cron or manual-only job."
            />
          </div>
          <div id="schedule-preview" class="preview" aria-live="polite">
            {(preview || v.cron_expr.trim() !== '') && !e.cron_expr && !e.timezone && (
              <SchedulePreviewView cronExpr={v.cron_expr} timezone={v.timezone} now={view.now} />
            )}
          </div>
        </fieldset>
        <fieldset>
          <legend>Retries and limits</legend>
          <div class="field-row">
            <TextField
              name="max_retries"
              label="Retries"
              value={v.max_retries}
              error={e.max_retries}
              inputmode="numeric"
              hint="After the first attempt, 0–100."
            />
            <TextField
              name="timeout_seconds"
              label="Timeout (seconds)"
              value={v.timeout_seconds}
              error={e.timeout_seconds}
              inputmode="numeric"
              hint="1–86400."
            />
            <SelectField
              name="lane"
              label="Lane"
              value={v.lane}
              error={e.lane}
              options={[['', 'automatic (by timeout)'], ...options(LANES)]}
            />
            <TextField
              name="priority"
              label="Priority"
              value={v.priority}
              error={e.priority}
              inputmode="numeric"
              hint="-100–100, higher first."
            />
          </div>
        </fieldset>
        <details class="advanced" open={ADVANCED.some((f) => e[f] !== undefined) || undefined}>
          <summary>Advanced</summary>
          <div class="stacked-fields">
            <div class="field-row">
              <TextField
                name="handler"
                label="Handler (instead of a command)"
                value={v.handler}
                error={e.handler}
                mono
              />
              <SelectField
                name="overlap"
                label="Overlap"
                value={v.overlap}
                error={e.overlap}
                options={options(OVERLAP_POLICIES)}
                hint="When a run is due while the last one still runs."
              />
              <SelectField
                name="misfire"
                label="Misfire policy"
                value={v.misfire}
                error={e.misfire}
                options={options(MISFIRE_POLICIES)}
                hint="Fire times missed while nothing ran."
              />
              <TextField
                name="catch_up_max"
                label="Catch-up limit"
                value={v.catch_up_max}
                error={e.catch_up_max}
                inputmode="numeric"
              />
              <TextField
                name="misfire_deadline_seconds"
                label="Misfire deadline (seconds)"
                value={v.misfire_deadline_seconds}
                error={e.misfire_deadline_seconds}
                inputmode="numeric"
                hint="Optional."
              />
            </div>
            <div class="field-row">
              <TextField
                name="backoff_base_seconds"
                label="Backoff base (s)"
                value={v.backoff_base_seconds}
                error={e.backoff_base_seconds}
                inputmode="decimal"
              />
              <TextField
                name="backoff_factor"
                label="Backoff factor"
                value={v.backoff_factor}
                error={e.backoff_factor}
                inputmode="decimal"
              />
              <TextField
                name="backoff_max_seconds"
                label="Backoff ceiling (s)"
                value={v.backoff_max_seconds}
                error={e.backoff_max_seconds}
                inputmode="decimal"
              />
              <SelectField
                name="backoff_jitter"
                label="Jitter"
                value={v.backoff_jitter}
                error={e.backoff_jitter}
                options={[
                  ['full', 'full'],
                  ['none', 'none'],
                ]}
              />
            </div>
            <TextArea
              name="payload"
              label="Payload (JSON)"
              value={v.payload}
              error={e.payload}
              hint="Passed to the command as JOB_PAYLOAD. At most 64 KiB."
            />
            <CheckField
              name="start_paused"
              label={target.paused}
              checked={v.start_paused !== ''}
              error={e.start_paused}
            />
          </div>
        </details>
        <details class="advanced" open={LIMITS.some((f) => e[f] !== undefined || v[f] !== '') || undefined}>
          <summary>Flow limits</summary>
          <div class="stacked-fields">
            <p class="hint">
              Attempts held back by a limit wait in order, without delaying other jobs. Leave empty for no limit.
            </p>
            <div class="field-row">
              <TextField
                name="max_concurrency"
                label="Max concurrency"
                value={v.max_concurrency}
                error={e.max_concurrency}
                inputmode="numeric"
                hint="At most this many run at once, across all workers (1–10000)."
              />
              <TextField
                name="concurrency_key"
                label="Concurrency key"
                value={v.concurrency_key}
                error={e.concurrency_key}
                mono
                placeholder="/tenant"
                hint="JSON Pointer into the payload; attempts with the same value there share the per-key limits."
              />
              <TextField
                name="max_concurrency_per_key"
                label="Max per key"
                value={v.max_concurrency_per_key}
                error={e.max_concurrency_per_key}
                inputmode="numeric"
                hint="At most this many per key value at once (1–10000)."
              />
            </div>
            <div class="field-row">
              <TextField
                name="rate_limit_limit"
                label="Rate limit (starts)"
                value={v.rate_limit_limit}
                error={e.rate_limit_limit}
                inputmode="numeric"
                hint="At most this many start per period (1–10000)."
              />
              <TextField
                name="rate_limit_period_seconds"
                label="Rate period (seconds)"
                value={v.rate_limit_period_seconds}
                error={e.rate_limit_period_seconds}
                inputmode="numeric"
                hint="1–86400."
              />
              <CheckField
                name="rate_limit_per_key"
                label="Rate limit per key value"
                checked={v.rate_limit_per_key !== ''}
                error={e.rate_limit_per_key}
              />
            </div>
          </div>
        </details>
        <div class="button-row">
          <button type="submit" class="btn btn-primary">
            {target.submit}
          </button>
          <button type="submit" class="btn" name="intent" value="preview">
            Preview schedule
          </button>
          <a href={target.cancel}>Cancel</a>
        </div>
      </form>
    </>
  );
};

async function renderForm(
  r: DashRequest,
  values: JobFormValues,
  errors: FieldErrors,
  status: 200 | 400 | 409,
  preview = false,
  lost = false,
) {
  return renderPage(r.c, r.view, {
    title: Object.keys(errors).length > 0 ? 'Error: new job' : 'New job',
    status,
    body: (
      <>
        <PageHeader
          title="New job"
          subtitle="Schedule a command with cron, run it once at a given time, or only by hand."
        />
        {lost && (
          <p class="flash flash-error" role="alert">
            The form you were filling in is no longer here (a refused form is kept for an hour, in the browser that sent
            it). Start again below.
          </p>
        )}
        <JobForm view={r.view} values={values} errors={errors} preview={preview} />
      </>
    ),
  });
}

export async function newJobPage(r: DashRequest): Promise<Response> {
  const wanted = r.c.req.query('draft');
  if (wanted === undefined) {
    if (readCookie(r.c, 'draft') !== undefined) clearCookie(r.c, 'draft');
    return renderForm(r, { ...JOB_FORM_DEFAULTS }, {}, 200);
  }
  const draft = openDraft(r.keys, readCookie(r.c, 'draft'));
  if (!draft || draft.id !== wanted) return renderForm(r, { ...JOB_FORM_DEFAULTS }, {}, 200, false, true);
  return renderForm(r, draft.values, draft.errors, 200, draft.preview);
}

/** Post/Redirect/Get: the form again at /jobs/new?draft=…, or in place when the draft is too large for a cookie. */
function showAgain(
  r: DashRequest,
  values: JobFormValues,
  errors: FieldErrors,
  status: 200 | 400 | 409,
  preview = false,
) {
  const id = newDraftId();
  const sealed = sealDraft(r.keys, { id, values, errors, preview });
  if (sealed === null) return renderForm(r, values, errors, status, preview);
  writeCookie(r.c, 'draft', sealed);
  return r.c.redirect(`/jobs/new?draft=${id}`, 303);
}

export async function createJobSubmit(r: DashRequest): Promise<Response> {
  const values = jobFormValues(r.form);
  if (r.form.get('intent') === 'preview') return showAgain(r, values, {}, 200, true);
  const { spec, errors } = jobSpecFromForm(values, r.deps.shortLaneMaxTimeoutMs, r.deps.targetPolicy);
  if (!spec) return showAgain(r, values, errors, 400);
  try {
    const job = await createJob(r.commands, spec);
    // The draft cookie is scoped to /jobs/new, so this request cannot see it: clear it blind.
    clearCookie(r.c, 'draft');
    setFlash(r.c, 'created', job.id);
    return r.c.redirect(`/jobs/${job.id}`, 303);
  } catch (error) {
    if (error instanceof ConflictError) return showAgain(r, values, { name: 'a live job already has this name' }, 409);
    throw error;
  }
}

export async function schedulePreviewFragment(r: DashRequest): Promise<Response> {
  const cronExpr = (r.c.req.query('cron_expr') ?? '').slice(0, 1000);
  const timezone = (r.c.req.query('timezone') ?? 'UTC').slice(0, 200);
  return renderFragment(r.c, <SchedulePreviewView cronExpr={cronExpr} timezone={timezone} now={r.view.now} />);
}
