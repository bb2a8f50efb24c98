/** @module dashboard/pages/executions — `/executions`: every attempt, newest first, filtered by status and job (live). */
import { EXECUTION_STATUSES, type ExecutionStatus } from '@jobs/core';
import { keysetPage } from '@jobs/api';
import { idParam, listJobNames } from '../lookups';
import { renderLive } from '../render';
import { ExecutionRow, Pager, Table, executionHeaders } from '../ui/components';
import { PageHeader } from '../ui/layout';
import type { DashRequest } from '../view';

const PAGE_SIZE = 50;
/** List rows carry a bounded error and output tail, so fifty of them need no byte cap (and no serializing to measure). */
const LIST_ROWS = { maxBytes: Infinity };

export async function executionsPage(r: DashRequest): Promise<Response> {
  const q = r.c.req.query();
  const status = (EXECUTION_STATUSES as readonly string[]).includes(q.status ?? '')
    ? (q.status as ExecutionStatus)
    : undefined;
  const jobId = idParam(q.job_id);
  const before = idParam(q.before);
  const { store } = r.deps;
  const [page, jobs] = await Promise.all([
    keysetPage(
      (n) => store.executionList({ jobId, status, before, limit: n, jobNames: true }),
      PAGE_SIZE,
      (e) => e,
      LIST_ROWS,
    ),
    store.jobChoices(200),
  ]);
  const names = new Map(jobs.map((j) => [j.id, j.name]));
  for (const [id, name] of listJobNames(page.data)) names.set(id, name);

  const filters = (
    <form method="get" action="/executions" class="filters" role="search" aria-label="Filter executions">
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" name="status">
          <option value="">any</option>
          {EXECUTION_STATUSES.map((s) => (
            <option value={s} selected={s === status}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-job">Job</label>
        <select id="filter-job" name="job_id">
          <option value="">any</option>
          {jobId && !jobs.some((j) => j.id === jobId) && (
            <option value={jobId} selected>
              {names.get(jobId) ?? `#${jobId} (deleted)`}
            </option>
          )}
          {jobs.map((j) => (
            <option value={j.id} selected={j.id === jobId}>
              {j.name}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" class="btn">
        Filter
      </button>
      {(status || jobId) && <a href="/executions">Clear filters</a>}
    </form>
  );

  const live = (
    <>
      <Table
        caption="Executions"
        headers={executionHeaders({ job: true, output: true })}
        rows={page.data.length}
        empty="No executions match."
      >
        {page.data.map((e) => (
          <ExecutionRow e={e} now={r.view.now} names={names} output />
        ))}
      </Table>
      <Pager path="/executions" params={{ status, job_id: jobId }} next={page.next_cursor} />
    </>
  );

  return renderLive(r, {
    title: 'Executions',
    label: 'Execution list',
    before: (
      <>
        <PageHeader title="Executions" subtitle="One row per attempt, newest first." />
        {filters}
      </>
    ),
    live,
  });
}
