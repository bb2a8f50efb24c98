/** @module dashboard/pages/jobs — `/jobs`: every live job with its schedule, next and last run, last outcome, actions. */
import type { FC } from 'hono/jsx';
import { keysetPage } from '@jobs/api';
import { renderLive } from '../render';
import { Cell, JobActions, Pager, Schedule, Status, Table, When } from '../ui/components';
import { TargetWords } from '../ui/target';
import { PageHeader } from '../ui/layout';
import { can, type DashRequest } from '../view';

const PAGE_SIZE = 50;
const FILTERS: [value: string, label: string][] = [
  ['', 'All'],
  ['active', 'Active'],
  ['paused', 'Paused'],
];

const StatusFilter: FC<{ current: string }> = ({ current }) => (
  <nav class="button-row filters" aria-label="Filter jobs by status">
    {FILTERS.map(([value, label]) => (
      <a
        class="btn btn-small"
        href={value ? `/jobs?status=${value}` : '/jobs'}
        aria-current={current === value ? 'page' : undefined}
      >
        {label}
      </a>
    ))}
  </nav>
);

export async function jobsPage(r: DashRequest): Promise<Response> {
  const q = r.c.req.query();
  const status = q.status === 'active' || q.status === 'paused' ? q.status : undefined;
  const before = q.before && /^[1-9][0-9]{0,17}$/.test(q.before) ? q.before : undefined;
  const page = await keysetPage(
    (n) => r.deps.store.jobList({ status, before, limit: n }),
    PAGE_SIZE,
    (job) => job,
  );
  const outcomes = await r.deps.store.executionLastOutcomes(page.data.map((j) => j.id));
  // Back to this very page after an action on a row (same filter, same page of results).
  const back = new URLSearchParams(
    Object.entries({ status, before }).filter((kv): kv is [string, string] => kv[1] !== undefined),
  );
  const returnTo = r.c.req.path + (back.size > 0 ? `?${back}` : '');
  const now = r.view.now;
  // Back from Run now, Pause or Resume on a row still listed: focus returns to that row's control.
  const target = r.view.flash?.target;
  const focusRow = target && page.data.some((job) => job.id === target.job) ? target : undefined;
  if (focusRow) r.view.focusHeld = true;

  const live = (
    <>
      <Table
        caption="Jobs"
        headers={['Name', 'Target', 'Status', 'Schedule', 'Next run', 'Last run', 'Last outcome', 'Actions']}
        rows={page.data.length}
        empty={
          <>
            No jobs{status ? ` with status ${status}` : ''} yet.
            {can(r.view, 'admin') && (
              <>
                {' '}
                <a href="/jobs/new">Create one</a>.
              </>
            )}
          </>
        }
      >
        {page.data.map((job) => {
          const last = outcomes.get(job.id);
          return (
            <tr>
              <Cell label="Name" class="wrap-anywhere">
                <a href={`/jobs/${job.id}`}>{job.name}</a>
              </Cell>
              <Cell label="Target" class="wrap-anywhere">
                <TargetWords job={job} />
              </Cell>
              <Cell label="Status">
                <Status status={job.status} />
              </Cell>
              <Cell label="Schedule">
                <Schedule job={job} now={now} />
              </Cell>
              <Cell label="Next run">
                <When at={job.nextRunAt} now={now} />
              </Cell>
              <Cell label="Last run">
                <When at={job.lastRunAt} now={now} />
              </Cell>
              <Cell label="Last outcome">
                {last ? (
                  <a href={`/executions/${last.id}`} aria-label={`${last.status}, execution ${last.id}`}>
                    <Status status={last.status} />
                  </a>
                ) : (
                  <span class="muted">—</span>
                )}
              </Cell>
              <Cell label="Actions">
                <JobActions
                  view={r.view}
                  job={job}
                  returnTo={returnTo}
                  small
                  focus={focusRow?.job === job.id ? focusRow.control : undefined}
                />
              </Cell>
            </tr>
          );
        })}
      </Table>
      <Pager path="/jobs" params={{ status }} next={page.next_cursor} />
    </>
  );

  return renderLive(r, {
    title: 'Jobs',
    label: 'Job list',
    everyMs: 5000,
    before: (
      <>
        <PageHeader
          title="Jobs"
          subtitle="Cron, one-off and manual jobs. Times are in UTC unless a job's time zone says otherwise."
          actions={
            can(r.view, 'admin') && (
              <a class="btn btn-primary" href="/jobs/new">
                New job
              </a>
            )
          }
        />
        <StatusFilter current={status ?? ''} />
      </>
    ),
    live,
  });
}
