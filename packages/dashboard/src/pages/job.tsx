/**
 * @module dashboard/pages/job — `/jobs/:id`: a job's settings, upcoming fire times and recent executions (live),
 * and `/jobs/:id/delete`, the confirmation page that makes deleting a two-step action without JS.
 */
import {
  changeFor,
  dataFor,
  isLimited,
  maskChange,
  nextFireTimes,
  NotFoundError,
  parseCron,
  type FlowJobState,
  type Job,
  type JobVersion,
} from '@jobs/core';
import type { FC } from 'hono/jsx';
import { formatDuration, formatJson } from '../format';
import { renderLive, renderPage } from '../render';
import {
  ActionButton,
  ExecutionRow,
  JobActions,
  Pre,
  Schedule,
  Status,
  Table,
  When,
  ZonedTime,
  executionHeaders,
} from '../ui/components';
import { PageHeader } from '../ui/layout';
import { TargetDetails } from '../ui/target';
import { can, type DashRequest } from '../view';

const RECENT = 20;
/** Versions the job page lists (GET /api/v1/jobs/{id}/versions has up to 1,000). */
const VERSIONS_SHOWN = 20;

const value = (v: unknown) =>
  v === null || v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v);

/** Who changed the definition, when, and what. */
const Versions: FC<{ versions: JobVersion[]; now: Date }> = ({ versions, now }) => (
  <section class="panel" aria-labelledby="versions-heading">
    <h2 id="versions-heading" class="panel-title">
      Version history
    </h2>
    <Table
      caption="Versions of this job, newest first"
      headers={['Version', 'When', 'Who', 'What changed']}
      rows={versions.length}
      empty="No versions recorded."
    >
      {versions.slice(0, VERSIONS_SHOWN).map((v) => (
        <tr>
          <td>v{v.version}</td>
          <td>
            <When at={v.createdAt} now={now} />
          </td>
          <td>{v.actor}</td>
          <td>
            {v.changes.length === 0 ? (
              <span class="muted">created</span>
            ) : (
              <ul class="compact">
                {v.changes.map(maskChange).map((c) => (
                  <li>
                    <code>{c.field}</code>: {value(c.old)} → {value(c.new)}
                  </li>
                ))}
              </ul>
            )}
          </td>
        </tr>
      ))}
    </Table>
  </section>
);

/** The live job named by the path's `:id` (a 404 page otherwise). */
export async function loadJob(r: DashRequest): Promise<Job> {
  const id = r.c.req.param('id')!;
  const job = await r.deps.store.jobGet(id);
  if (!job) throw new NotFoundError('job', id);
  return job;
}

const Upcoming: FC<{ job: Job; now: Date }> = ({ job, now }) => {
  if (job.cronExpr === null || job.status !== 'active') return null;
  const parsed = parseCron(job.cronExpr, job.timezone);
  if (!parsed.ok) return null;
  const times = nextFireTimes(parsed.schedule, now, 5);
  return (
    <>
      <h3 class="subhead">Next fire times</h3>
      <ol class="compact">
        {times.map((t) => (
          <li>
            <ZonedTime at={t} zone={job.timezone} />
          </li>
        ))}
      </ol>
    </>
  );
};

const Settings: FC<{ job: Job; now: Date }> = ({ job, now }) => (
  <dl class="props">
    <TargetDetails job={job} />
    <dt>Payload</dt>
    <dd>
      <Pre text={formatJson(job.payload)} label="Payload" />
    </dd>
    <dt>Retries</dt>
    <dd>
      {job.maxRetries === 0
        ? 'none: a failed attempt goes straight to the dead letter queue'
        : `up to ${job.maxRetries} after the first attempt`}
    </dd>
    <dt>Backoff</dt>
    <dd>
      {formatDuration(job.backoff.baseMs)} × {job.backoff.factor}^n, at most {formatDuration(job.backoff.maxMs)}, jitter{' '}
      {job.backoff.jitter}
    </dd>
    <dt>Timeout</dt>
    <dd>{formatDuration(job.timeoutMs)}</dd>
    <dt>Lane · priority</dt>
    <dd>
      {job.lane} · {job.priority}
    </dd>
    <dt>Overlap</dt>
    <dd>{job.overlap}</dd>
    <dt>Misfire</dt>
    <dd>
      {job.misfire}
      {job.misfire === 'catch_up' && ` (at most ${job.catchUpMax})`}
      {job.misfireDeadlineMs !== null && `, deadline ${formatDuration(job.misfireDeadlineMs)}`}
    </dd>
    <dt>Version</dt>
    <dd>
      v{job.version}
      {job.managedBy !== null && <span class="muted"> (managed by {job.managedBy})</span>}
    </dd>
    <dt>Created</dt>
    <dd>
      <When at={job.createdAt} now={now} exact />
    </dd>
    <dt>Updated</dt>
    <dd>
      <When at={job.updatedAt} now={now} exact />
    </dd>
  </dl>
);

/** The job's limits, and (live) how many attempts hold a slot and how many wait, and why. */
const Limits: FC<{ job: Job; state: FlowJobState | null; now: Date }> = ({ job, state, now }) => {
  const l = job.limits;
  const w = state?.waiting;
  return (
    <section class="panel" aria-labelledby="limits-heading">
      <h2 id="limits-heading" class="panel-title">
        Flow limits
      </h2>
      <dl class="props">
        <dt>At once</dt>
        <dd>{l.maxConcurrency === null ? 'no job-wide limit' : `at most ${l.maxConcurrency}`}</dd>
        <dt>Per key</dt>
        <dd>
          {l.maxConcurrencyPerKey === null ? 'no per-key limit' : `at most ${l.maxConcurrencyPerKey} per value of `}
          {l.concurrencyKey !== null && (
            <code>{l.concurrencyKey === '' ? '(the whole payload)' : l.concurrencyKey}</code>
          )}
        </dd>
        <dt>Rate</dt>
        <dd>
          {l.rateLimit === null
            ? 'no rate limit'
            : `at most ${l.rateLimit.limit} starts per ${formatDuration(l.rateLimit.periodMs)}${l.rateLimit.perKey ? ' per key value' : ''}`}
          {state?.rate && (
            <span class="muted">
              {' '}
              ({state.rate.inWindow} in the window
              {state.rate.nextStartAt && (
                <>
                  , next start <When at={state.rate.nextStartAt} now={now} />
                </>
              )}
              )
            </span>
          )}
        </dd>
        <dt>Holding a slot</dt>
        <dd>{state?.running ?? 0}</dd>
        <dt>Waiting for a slot</dt>
        <dd>
          {w ? w.maxConcurrency + w.maxConcurrencyPerKey + w.rateLimit : 0}
          {w && w.maxConcurrency + w.maxConcurrencyPerKey + w.rateLimit > 0 && (
            <span class="muted">
              {' '}
              ({w.maxConcurrency} for the job limit, {w.maxConcurrencyPerKey} for their key's, {w.rateLimit} for the
              rate window)
            </span>
          )}
        </dd>
        {state && state.keys.length > 0 && (
          <>
            <dt>Busiest keys</dt>
            <dd>
              <ul class="compact">
                {state.keys.slice(0, 5).map((k) => (
                  <li>
                    <code>{k.key === '' ? '(none)' : k.key}</code>: {k.running} running, {k.waiting} waiting
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
    </section>
  );
};

export async function jobPage(r: DashRequest): Promise<Response> {
  // A read key sees the payload, an HTTP body and their versions as the audit shows them (dataFor in @jobs/core).
  const role = r.view.principal?.role;
  const job = dataFor(role, await loadJob(r));
  const limited = isLimited(job.limits);
  const [executions, flow, stored] = await Promise.all([
    r.deps.store.executionList({ jobId: job.id, limit: RECENT }),
    limited ? r.deps.queue.flowInspect([job.id]) : Promise.resolve([]),
    r.deps.store.jobVersions(job.id),
  ]);
  const versions = stored?.map((v) => ({ ...v, changes: v.changes.map((change) => changeFor(role, change)) }));
  const now = r.view.now;
  const path = `/jobs/${job.id}`;

  const before = (
    <>
      <PageHeader
        title={job.name}
        subtitle={
          <>
            <Status status={job.status} /> Job #{job.id}
          </>
        }
        actions={
          <>
            <JobActions view={r.view} job={job} returnTo={path} />
            {can(r.view, 'operate') && (
              <div class="button-row">
                {can(r.view, 'admin') && (
                  <a class="btn" href={`/jobs/${job.id}/edit`}>
                    Edit
                  </a>
                )}
                <a class="btn" href={`/jobs/${job.id}/backfill`}>
                  Backfill…
                </a>
              </div>
            )}
          </>
        }
      />
      <div class="grid-2">
        <section class="panel" aria-labelledby="schedule-heading">
          <h2 id="schedule-heading" class="panel-title">
            Schedule
          </h2>
          <dl class="props">
            <dt>Schedule</dt>
            <dd>
              <Schedule job={job} now={now} />
            </dd>
            <dt>Next run</dt>
            <dd>
              <When at={job.nextRunAt} now={now} exact />
              {job.status === 'paused' && <span class="muted"> (paused)</span>}
            </dd>
            <dt>Last run</dt>
            <dd>
              <When at={job.lastRunAt} now={now} exact />
            </dd>
          </dl>
          <Upcoming job={job} now={now} />
        </section>
        <section class="panel" aria-labelledby="settings-heading">
          <h2 id="settings-heading" class="panel-title">
            Settings
          </h2>
          <Settings job={job} now={now} />
        </section>
      </div>
      <Versions versions={versions ?? []} now={now} />
    </>
  );

  const live = (
    <>
      {limited && <Limits job={job} state={flow[0] ?? null} now={now} />}
      <h2 id="recent-heading">Recent executions</h2>
      <Table
        caption={`Recent executions of ${job.name}`}
        headers={executionHeaders({ output: true })}
        rows={executions.length}
        empty="No executions yet. Run it now, or wait for its schedule."
      >
        {executions.map((e) => (
          <ExecutionRow e={e} now={now} output />
        ))}
      </Table>
      <p class="pager">
        <a href={`/executions?job_id=${job.id}`}>All executions of this job →</a>
      </p>
    </>
  );
  return renderLive(r, { title: job.name, label: 'Recent executions', before, live });
}

export async function deleteJobPage(r: DashRequest): Promise<Response> {
  const job = await loadJob(r);
  const body = (
    <div class="panel confirm">
      <h1>Delete “{job.name}”?</h1>
      <p>
        The job stops: no further runs. Its queued and running executions are cancelled (running commands are killed).
      </p>
      <p>Its history stays readable under Executions, and its name can be used again.</p>
      <div class="button-row">
        <ActionButton view={r.view} action={`/jobs/${job.id}/delete`} label="Delete job" tone="danger" />
        <a class="btn" href={`/jobs/${job.id}`}>
          Keep it
        </a>
      </div>
    </div>
  );
  return renderPage(r.c, r.view, { title: `Delete ${job.name}`, body });
}
