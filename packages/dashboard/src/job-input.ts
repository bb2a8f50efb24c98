/**
 * @module dashboard/job-input — the job form's fields to the API's create body, validated by the same zod schema
 * (JobCreate) and converted by the same toJobSpec as POST /api/v1/jobs; problems come back per form field.
 * Also the schedule preview, from the scheduler's own cron code.
 */
import { isValidTimeZone, nextFireTimes, parseCron, type Job, type JobSpec } from '@jobs/core';
import { ApiError, JobCreate, toJobSpec, zodDetails, type ErrorDetail } from '@jobs/api';
import type { AddressPolicy } from '@jobs/core';
import {
  putTarget,
  targetFormValues,
  TARGET_FIELDS,
  TARGET_FORM_DEFAULTS,
  TARGET_TEXTAREAS,
  targetFieldOf,
} from './target-input';
import { instantToWallTime, isWallTime, wallTimeToInstant } from './wall-time';

/** The form's fields, as strings, exactly as typed (re-rendered as is after an error). */
export const JOB_FIELDS = [
  'name',
  'command',
  'cron_expr',
  'timezone',
  'run_at',
  'max_retries',
  'timeout_seconds',
  'lane',
  'priority',
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
  'max_concurrency',
  'concurrency_key',
  'max_concurrency_per_key',
  'rate_limit_limit',
  'rate_limit_period_seconds',
  'rate_limit_per_key',
  'start_paused',
  ...TARGET_FIELDS,
] as const;
export type JobField = (typeof JOB_FIELDS)[number];
export type JobFormValues = Record<JobField, string>;
export type FieldErrors = Partial<Record<JobField | 'form', string>>;

export const JOB_FORM_DEFAULTS: JobFormValues = {
  name: '',
  command: '',
  cron_expr: '',
  timezone: 'UTC',
  run_at: '',
  max_retries: '3',
  timeout_seconds: '300',
  lane: '',
  priority: '0',
  handler: '',
  payload: '',
  overlap: 'allow',
  misfire: 'run_once',
  catch_up_max: '10',
  misfire_deadline_seconds: '',
  backoff_base_seconds: '1',
  backoff_factor: '2',
  backoff_max_seconds: '300',
  backoff_jitter: 'full',
  max_concurrency: '',
  concurrency_key: '',
  max_concurrency_per_key: '',
  rate_limit_limit: '',
  rate_limit_period_seconds: '',
  rate_limit_per_key: '',
  start_paused: '',
  ...TARGET_FORM_DEFAULTS,
};

/** A job's definition as the form's fields: the edit form starts from it. */
export function jobFormValuesOf(job: Job): JobFormValues {
  const seconds = (ms: number) => String(ms / 1000);
  const optional = (n: number | null) => (n === null ? '' : String(n));
  const l = job.limits;
  return {
    name: job.name,
    cron_expr: job.cronExpr ?? '',
    timezone: job.timezone,
    // The form's run-once field is a wall time in the job's zone (a datetime-local input).
    run_at: job.runAt ? instantToWallTime(job.runAt, job.timezone) : '',
    max_retries: String(job.maxRetries),
    timeout_seconds: seconds(job.timeoutMs),
    lane: job.lane,
    priority: String(job.priority),
    payload: job.payload === null || job.payload === undefined ? '' : JSON.stringify(job.payload, null, 2),
    overlap: job.overlap,
    misfire: job.misfire,
    catch_up_max: String(job.catchUpMax),
    misfire_deadline_seconds: job.misfireDeadlineMs === null ? '' : seconds(job.misfireDeadlineMs),
    backoff_base_seconds: seconds(job.backoff.baseMs),
    backoff_factor: String(job.backoff.factor),
    backoff_max_seconds: seconds(job.backoff.maxMs),
    backoff_jitter: job.backoff.jitter,
    max_concurrency: optional(l.maxConcurrency),
    concurrency_key: l.concurrencyKey ?? '',
    max_concurrency_per_key: optional(l.maxConcurrencyPerKey),
    rate_limit_limit: l.rateLimit ? String(l.rateLimit.limit) : '',
    rate_limit_period_seconds: l.rateLimit ? seconds(l.rateLimit.periodMs) : '',
    rate_limit_per_key: l.rateLimit?.perKey ? 'on' : '',
    start_paused: job.status === 'paused' ? 'on' : '',
    // The target's fields, secret header values masked (saving the mask back keeps the stored value).
    ...targetFormValues(job),
  };
}

/** Browsers submit textarea line breaks as CRLF; a shell command or JSON typed in one means LF. */
const TEXTAREAS: ReadonlySet<JobField> = new Set(['command', 'payload', ...TARGET_TEXTAREAS]);

export function jobFormValues(form: URLSearchParams): JobFormValues {
  const values = { ...JOB_FORM_DEFAULTS };
  for (const field of JOB_FIELDS) {
    const raw = form.get(field);
    if (raw !== null) values[field] = TEXTAREAS.has(field) ? raw.replace(/\r\n?/g, '\n') : raw;
  }
  if (form.get('start_paused') === null) values.start_paused = '';
  if (form.get('rate_limit_per_key') === null) values.rate_limit_per_key = '';
  return values;
}

const NUMBER = /^\s*-?(\d+(\.\d*)?|\.\d+)\s*$/;

/** An API detail path (`backoff.base_seconds`) as the form field that holds it. */
function fieldOf(path: string): JobField | 'form' {
  const target = targetFieldOf(path);
  if (target) return target;
  const flat = path.replace(/\./g, '_');
  if ((JOB_FIELDS as readonly string[]).includes(flat)) return flat as JobField;
  if (path === 'backoff') return 'backoff_max_seconds';
  if (path === 'rate_limit') return 'rate_limit_limit';
  if (path === 'status') return 'start_paused';
  return 'form';
}

function addDetails(errors: FieldErrors, details: ErrorDetail[]): void {
  for (const d of details) {
    const field = fieldOf(d.path);
    errors[field] ??= field === 'form' && d.path !== 'body' ? `${d.path}: ${d.message}` : d.message;
  }
}

/**
 * The run-once field to the body's `run_at`: a wall time (what the datetime-local input gives) is read in the form's
 * time zone; anything else goes to the API's own check as typed (an ISO instant with its offset is accepted there).
 * With an unknown zone the time zone's error says what to fix, and the wall time waits for it.
 */
function putRunAt(values: JobFormValues, body: Record<string, unknown>, errors: FieldErrors): void {
  const raw = values.run_at.trim();
  if (raw === '') return;
  if (!isWallTime(raw)) {
    body.run_at = values.run_at;
    return;
  }
  const zone = values.timezone.trim() || 'UTC';
  if (!isValidTimeZone(zone)) return;
  const at = wallTimeToInstant(raw, zone);
  if (at) body.run_at = at.toISOString();
  else errors.run_at = `${raw.replace('T', ' ')} is not a date and time that exists`;
}

/**
 * Validates the form as POST /api/v1/jobs would validate its JSON. Returns the job spec, or the problems by field.
 * @example const { spec, errors } = jobSpecFromForm(values, 600_000)
 */
export function jobSpecFromForm(
  values: JobFormValues,
  shortLaneMaxTimeoutMs: number,
  targetPolicy?: AddressPolicy,
): { spec: JobSpec | null; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const body: Record<string, unknown> = { name: values.name, timezone: values.timezone.trim() || 'UTC' };
  const text = (field: JobField, key: string = field) => {
    if (values[field].trim() !== '') body[key] = values[field];
  };
  text('cron_expr');
  putRunAt(values, body, errors);
  putTarget(values, body, errors);
  const number = (field: JobField, set: (n: number) => void) => {
    const raw = values[field];
    if (raw.trim() === '') return;
    if (!NUMBER.test(raw)) errors[field] = 'must be a number';
    else set(Number(raw));
  };
  number('max_retries', (n) => (body.max_retries = n));
  number('timeout_seconds', (n) => (body.timeout_seconds = n));
  number('priority', (n) => (body.priority = n));
  number('catch_up_max', (n) => (body.catch_up_max = n));
  number('misfire_deadline_seconds', (n) => (body.misfire_deadline_seconds = n));
  const backoff: Record<string, unknown> = { jitter: values.backoff_jitter };
  number('backoff_base_seconds', (n) => (backoff.base_seconds = n));
  number('backoff_factor', (n) => (backoff.factor = n));
  number('backoff_max_seconds', (n) => (backoff.max_seconds = n));
  body.backoff = backoff;
  if (values.lane) body.lane = values.lane;
  body.overlap = values.overlap;
  body.misfire = values.misfire;
  body.status = values.start_paused ? 'paused' : 'active';
  number('max_concurrency', (n) => (body.max_concurrency = n));
  number('max_concurrency_per_key', (n) => (body.max_concurrency_per_key = n));
  // The pointer is kept as typed: "" (the whole payload) is a valid pointer, so an untouched field means none.
  if (values.concurrency_key !== '') body.concurrency_key = values.concurrency_key;
  if (values.rate_limit_limit.trim() !== '' || values.rate_limit_period_seconds.trim() !== '') {
    const rate: Record<string, unknown> = { per_key: values.rate_limit_per_key !== '' };
    number('rate_limit_limit', (n) => (rate.limit = n));
    number('rate_limit_period_seconds', (n) => (rate.period_seconds = n));
    body.rate_limit = rate;
  }
  if (values.payload.trim() !== '') {
    try {
      body.payload = JSON.parse(values.payload);
    } catch (error) {
      errors.payload = `is not valid JSON: ${(error as Error).message}`;
    }
  }

  if (values.name.trim() === '') errors.name = 'Enter a name.';
  const parsed = JobCreate.safeParse(body);
  if (!parsed.success) addDetails(errors, zodDetails(parsed.error, 'body'));
  if (!parsed.success || Object.keys(errors).length > 0) return { spec: null, errors };
  try {
    return { spec: toJobSpec(parsed.data, shortLaneMaxTimeoutMs, targetPolicy), errors };
  } catch (error) {
    if (error instanceof ApiError && error.details) {
      addDetails(errors, error.details);
      return { spec: null, errors };
    }
    throw error;
  }
}

export type SchedulePreview =
  | { kind: 'none' }
  | { kind: 'error'; field: 'cron_expr' | 'timezone'; message: string }
  | { kind: 'ok'; times: Date[] };

/** The next `count` fire times of an expression in a zone, as GET /api/v1/schedules/preview computes them. */
export function previewSchedule(cronExpr: string, timezone: string, now: Date, count = 5): SchedulePreview {
  const zone = timezone.trim() || 'UTC';
  if (cronExpr.trim() === '') return { kind: 'none' };
  if (!isValidTimeZone(zone)) {
    return {
      kind: 'error',
      field: 'timezone',
      message: `unknown time zone ${JSON.stringify(zone)} (use an IANA name such as "Europe/Paris" or "UTC")`,
    };
  }
  const parsed = parseCron(cronExpr, zone);
  if (!parsed.ok) return { kind: 'error', field: 'cron_expr', message: parsed.error };
  return { kind: 'ok', times: nextFireTimes(parsed.schedule, now, count) };
}
