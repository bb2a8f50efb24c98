/**
 * @module dashboard/ui/components — small shared pieces: status badges, times, action buttons, text blocks, tables.
 * The pieces of a list row are `markup` templates (one escaped string each, no element tree), shared with the pages
 * as components: a page renders fifty rows of ten cells, and as JSX their elements cost more than all the rest.
 */
import { isoString, type ExecutionStatus, type ExecutionSummary, type Job } from '@jobs/core';
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Child, FC, PropsWithChildren } from 'hono/jsx';

/** hono's `html` tag, typed as what it returns when no value is a promise (none here is): an escaped string. */
export const markup = html as (strings: TemplateStringsArray, ...values: unknown[]) => HtmlEscapedString;
const DASH = markup`<span class="muted">—</span>`;
import { describeCron } from '../cron-words';
import { excerpt, formatDuration, formatInZone, formatRelative, formatUtc } from '../format';
import { can, type View } from '../view';

const focusProps = (on: boolean) => (on ? { autofocus: true, describedBy: 'flash' } : {});

export const CsrfField: FC<{ view: View }> = ({ view }) => <input type="hidden" name="_csrf" value={view.csrf} />;

/** Status as text in a coloured badge (the text carries the meaning; colour only helps). */
const statusHtml = (status: ExecutionStatus | Job['status']) =>
  markup`<span class="badge st-${status}">${status}</span>`;
export const Status: FC<{ status: ExecutionStatus | Job['status'] }> = ({ status }) => statusHtml(status);

/** A relative time ("12 s ago") with the exact instant in `datetime` and `title`; a dash for none. */
export function whenHtml(at: Date | null, now: Date, exact?: boolean): HtmlEscapedString {
  if (!at) return DASH;
  const absolute = formatUtc(at);
  return exact
    ? markup`<span><time datetime="${isoString(at)}">${absolute}</time> <span class="muted nowrap">(${formatRelative(at, now)})</span></span>`
    : markup`<time datetime="${isoString(at)}" title="${absolute}">${formatRelative(at, now)}</time>`;
}
export const When: FC<{ at: Date | null; now: Date; exact?: boolean }> = ({ at, now, exact }) =>
  whenHtml(at, now, exact);

/** A fire time as the zone's wall time, then in UTC; each part stays on one line (no break inside a date). */
export const ZonedTime: FC<{ at: Date; zone: string }> = ({ at, zone }) => (
  <>
    <time datetime={at.toISOString()}>{formatInZone(at, zone)}</time>
    {zone !== 'UTC' && (
      <>
        {' · '}
        <span class="muted nowrap">{formatUtc(at)}</span>
      </>
    )}
  </>
);

const durationHtml = (ms: number | null) => (ms === null ? DASH : markup`${formatDuration(ms)}`);
export const Duration: FC<{ ms: number | null }> = ({ ms }) => durationHtml(ms);

/**
 * Text exactly as stored. The newline after the opening tag is dropped by every HTML parser, so one is always
 * written: a value that itself starts with a newline keeps it.
 */
export const Pre: FC<{ text: string | null; label: string; empty?: string }> = ({ text, label, empty = 'none' }) =>
  text === null || text === '' ? (
    <p class="muted">{empty}</p>
  ) : (
    <pre class="block" tabindex={0} aria-label={label}>
      {`\n${text}`}
    </pre>
  );

/** One POST button in its own form, with the CSRF token and where to come back to. */
export const ActionButton: FC<{
  view: View;
  action: string;
  label: string;
  returnTo?: string;
  tone?: 'primary' | 'danger' | 'plain';
  small?: boolean;
  describedBy?: string;
  autofocus?: boolean;
  /** Hidden fields posted with the button. */
  fields?: Record<string, string>;
}> = ({ view, action, label, returnTo, tone = 'plain', small, describedBy, autofocus, fields }) => (
  <form method="post" action={action} class="inline-form">
    <CsrfField view={view} />
    {returnTo && <input type="hidden" name="return_to" value={returnTo} />}
    {Object.entries(fields ?? {}).map(([name, value]) => (
      <input type="hidden" name={name} value={value} />
    ))}
    <button
      type="submit"
      class={`btn btn-${tone}${small ? ' btn-small' : ''}`}
      aria-describedby={describedBy}
      autofocus={autofocus || undefined}
    >
      {label}
    </button>
  </form>
);

/**
 * The job's actions: run now, pause or resume, delete (a link to a confirmation page, which works without JS).
 * `focus`: the control that takes focus back after its action (described by the flash saying what happened).
 */
export const JobActions: FC<{
  view: View;
  job: Job;
  returnTo: string;
  small?: boolean;
  focus?: 'trigger' | 'toggle';
}> = ({ view, job, returnTo, small, focus }) =>
  // Only what the viewer's role may do (the server refuses the rest anyway).
  !can(view, 'operate') ? null : (
    <div class="button-row" role="group" aria-label={`Actions for ${job.name}`}>
      <ActionButton
        view={view}
        action={`/jobs/${job.id}/trigger`}
        label="Run now"
        returnTo={returnTo}
        tone="primary"
        small={small}
        {...focusProps(focus === 'trigger')}
      />
      {job.status === 'active' ? (
        <ActionButton
          view={view}
          action={`/jobs/${job.id}/pause`}
          label="Pause"
          returnTo={returnTo}
          small={small}
          {...focusProps(focus === 'toggle')}
        />
      ) : (
        <ActionButton
          view={view}
          action={`/jobs/${job.id}/resume`}
          label="Resume"
          returnTo={returnTo}
          small={small}
          {...focusProps(focus === 'toggle')}
        />
      )}
      {can(view, 'admin') && (
        <a class={`btn btn-danger-link${small ? ' btn-small' : ''}`} href={`/jobs/${job.id}/delete`}>
          Delete…
        </a>
      )}
    </div>
  );

/** "every 5 minutes" over the expression and its zone; the expression alone when it has no simple wording. */
export const Schedule: FC<{ job: Pick<Job, 'cronExpr' | 'timezone' | 'runAt'>; now: Date }> = ({ job, now }) => {
  if (job.cronExpr !== null) {
    const words = describeCron(job.cronExpr);
    return (
      <span class="schedule">
        {words && <span class="schedule-words">{words}</span>}
        <span class="schedule-expr">
          <code>{job.cronExpr}</code> <span class="muted">{job.timezone}</span>
        </span>
      </span>
    );
  }
  if (job.runAt) {
    return (
      <span class="schedule">
        <span class="schedule-words">once</span>
        <span class="schedule-expr">
          <When at={job.runAt} now={now} exact />
        </span>
      </span>
    );
  }
  return <span class="muted">manual only</span>;
};

/** A table cell that shows its column name before the value when rows stack on a narrow screen. */
export const Cell: FC<PropsWithChildren<{ label: string; class?: string }>> = ({ label, children, class: cls }) => (
  <td data-label={label} class={cls}>
    {children}
  </td>
);

/** Cell as a template, for rows made of templates. */
export const cellHtml = (label: string, content: unknown, cls?: string) =>
  cls === undefined
    ? markup`<td data-label="${label}">${content}</td>`
    : markup`<td data-label="${label}" class="${cls}">${content}</td>`;

/** A table that becomes one card per row on narrow screens; `caption` names it for assistive technology. */
export const Table: FC<PropsWithChildren<{ caption: string; headers: string[]; empty?: Child; rows: number }>> = ({
  caption,
  headers,
  rows,
  empty,
  children,
}) =>
  rows === 0 ? (
    <p class="empty">{empty ?? 'Nothing here yet.'}</p>
  ) : (
    <div class="table-wrap">
      <table class="stack">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {headers.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );

/** "Older →" for keyset pages: the same query with `before` set to the last id of this page. */
export const Pager: FC<{ path: string; params: Record<string, string | undefined>; next: string | null }> = ({
  path,
  params,
  next,
}) => {
  if (!next) return null;
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) query.set(k, v);
  query.set('before', next);
  return (
    <nav class="pager" aria-label="Pages">
      <a href={`/${path.replace(/^\//, '')}?${query}`}>Older →</a>
    </nav>
  );
};

/** A link to a job by name (its id when the job is unknown or deleted). */
export function jobNameHtml(jobId: string, names: Map<string, string>): HtmlEscapedString {
  const name = names.get(jobId);
  return name === undefined
    ? markup`<span>job #${jobId} <span class="muted">(deleted)</span></span>`
    : markup`<a href="/jobs/${jobId}">${name}</a>`;
}

/** The last line of an attempt's error and of its output (the end of it a list row carries), whichever it has. */
export function outcomeExcerptHtml(e: Pick<ExecutionSummary, 'error' | 'outputTail'>): HtmlEscapedString {
  const error = excerpt(e.error);
  const output = excerpt(e.outputTail);
  if (!error && !output) return DASH;
  return markup`<span class="excerpt">${error}${error && output ? markup`<br/>` : ''}${output ? markup`<span class="muted">${output}</span>` : ''}</span>`;
}

/** The row of an execution in any list. */
function executionRowHtml(
  e: ExecutionSummary,
  now: Date,
  names?: Map<string, string>,
  output?: boolean,
): HtmlEscapedString {
  const duration =
    e.status === 'running' && e.startedAt
      ? markup`<span class="nowrap">${formatDuration(Math.max(0, now.getTime() - e.startedAt.getTime()))} <span class="muted">so far</span></span>`
      : durationHtml(e.durationMs);
  return markup`<tr>${cellHtml('Execution', markup`<a href="/executions/${e.id}">#${e.id}</a>`)}${names ? cellHtml('Job', jobNameHtml(e.jobId, names)) : ''}${cellHtml(
    'Status',
    statusHtml(e.status),
  )}${cellHtml('Trigger', e.trigger)}${cellHtml('Attempt', e.attempt)}${cellHtml('Queued', whenHtml(e.queuedAt, now))}${cellHtml('Duration', duration)}${cellHtml(
    'Worker',
    e.workerId ?? DASH,
    'wrap-anywhere',
  )}${output ? cellHtml('Output', outcomeExcerptHtml(e)) : ''}</tr>`;
}
export const ExecutionRow: FC<{ e: ExecutionSummary; now: Date; names?: Map<string, string>; output?: boolean }> = ({
  e,
  now,
  names,
  output,
}) => executionRowHtml(e, now, names, output);

/** Column headers matching ExecutionRow with the same options. */
export function executionHeaders(options: { job?: boolean; output?: boolean } = {}): string[] {
  return [
    'Execution',
    ...(options.job ? ['Job'] : []),
    'Status',
    'Trigger',
    'Attempt',
    'Queued',
    'Duration',
    'Worker',
    ...(options.output ? ['Output'] : []),
  ];
}
