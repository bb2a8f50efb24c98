/** @module dashboard/ui/components — small shared pieces: status badges, times, action buttons, text blocks, tables. */
import type { ExecutionStatus, ExecutionSummary, Job } from '@jobs/core';
import type { Child, FC, PropsWithChildren } from 'hono/jsx';
import { describeCron } from '../cron-words';
import { excerpt, formatDuration, formatInZone, formatRelative, formatUtc } from '../format';
import { can, type View } from '../view';

const focusProps = (on: boolean) => (on ? { autofocus: true, describedBy: 'flash' } : {});

export const CsrfField: FC<{ view: View }> = ({ view }) => <input type="hidden" name="_csrf" value={view.csrf} />;

/** Status as text in a coloured badge (the text carries the meaning; colour only helps). */
export const Status: FC<{ status: ExecutionStatus | Job['status'] }> = ({ status }) => <span class={`badge st-${status}`}>{status}</span>;

/** A relative time ("12 s ago") with the exact instant in `datetime` and `title`; a dash for none. */
export const When: FC<{ at: Date | null; now: Date; exact?: boolean }> = ({ at, now, exact }) => {
  if (!at) return <span class="muted">—</span>;
  const absolute = formatUtc(at);
  return exact ? (
    <span>
      <time datetime={at.toISOString()}>{absolute}</time> <span class="muted nowrap">({formatRelative(at, now)})</span>
    </span>
  ) : (
    <time datetime={at.toISOString()} title={absolute}>
      {formatRelative(at, now)}
    </time>
  );
};

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

export const Duration: FC<{ ms: number | null }> = ({ ms }) => (ms === null ? <span class="muted">—</span> : <>{formatDuration(ms)}</>);

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
    <button type="submit" class={`btn btn-${tone}${small ? ' btn-small' : ''}`} aria-describedby={describedBy} autofocus={autofocus || undefined}>
      {label}
    </button>
  </form>
);

/**
 * The job's actions: run now, pause or resume, delete (a link to a confirmation page, which works without JS).
 * `focus`: the control that takes focus back after its action (described by the flash saying what happened).
 */
export const JobActions: FC<{ view: View; job: Job; returnTo: string; small?: boolean; focus?: 'trigger' | 'toggle' }> = ({
  view,
  job,
  returnTo,
  small,
  focus,
}) =>
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
        <ActionButton view={view} action={`/jobs/${job.id}/pause`} label="Pause" returnTo={returnTo} small={small} {...focusProps(focus === 'toggle')} />
      ) : (
        <ActionButton view={view} action={`/jobs/${job.id}/resume`} label="Resume" returnTo={returnTo} small={small} {...focusProps(focus === 'toggle')} />
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
export const Pager: FC<{ path: string; params: Record<string, string | undefined>; next: string | null }> = ({ path, params, next }) => {
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
export const JobName: FC<{ jobId: string; names: Map<string, string> }> = ({ jobId, names }) => {
  const name = names.get(jobId);
  return name === undefined ? <span>job #{jobId} <span class="muted">(deleted)</span></span> : <a href={`/jobs/${jobId}`}>{name}</a>;
};

/** The last line of an attempt's error and of its output (the end of it a list row carries), whichever it has. */
export const OutcomeExcerpt: FC<{ e: Pick<ExecutionSummary, 'error' | 'outputTail'> }> = ({ e }) => {
  const error = excerpt(e.error);
  const output = excerpt(e.outputTail);
  if (!error && !output) return <span class="muted">—</span>;
  return (
    <span class="excerpt">
      {error}
      {error && output && <br />}
      {output && <span class="muted">{output}</span>}
    </span>
  );
};

/** The row of an execution in any list. */
export const ExecutionRow: FC<{ e: ExecutionSummary; now: Date; names?: Map<string, string>; output?: boolean }> = ({ e, now, names, output }) => (
  <tr>
    <Cell label="Execution">
      <a href={`/executions/${e.id}`}>#{e.id}</a>
    </Cell>
    {names && (
      <Cell label="Job">
        <JobName jobId={e.jobId} names={names} />
      </Cell>
    )}
    <Cell label="Status">
      <Status status={e.status} />
    </Cell>
    <Cell label="Trigger">{e.trigger}</Cell>
    <Cell label="Attempt">{e.attempt}</Cell>
    <Cell label="Queued">
      <When at={e.queuedAt} now={now} />
    </Cell>
    <Cell label="Duration">
      {e.status === 'running' && e.startedAt ? (
        <span class="nowrap">
          {formatDuration(Math.max(0, now.getTime() - e.startedAt.getTime()))} <span class="muted">so far</span>
        </span>
      ) : (
        <Duration ms={e.durationMs} />
      )}
    </Cell>
    <Cell label="Worker" class="wrap-anywhere">
      {e.workerId ?? <span class="muted">—</span>}
    </Cell>
    {output && (
      <Cell label="Output">
        <OutcomeExcerpt e={e} />
      </Cell>
    )}
  </tr>
);

/** Column headers matching ExecutionRow with the same options. */
export function executionHeaders(options: { job?: boolean; output?: boolean } = {}): string[] {
  return ['Execution', ...(options.job ? ['Job'] : []), 'Status', 'Trigger', 'Attempt', 'Queued', 'Duration', 'Worker', ...(options.output ? ['Output'] : [])];
}
