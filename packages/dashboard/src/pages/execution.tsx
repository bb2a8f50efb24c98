/**
 * @module dashboard/pages/execution — `/executions/:id`: one attempt's timeline (from its timestamps), output, error,
 * its attempt chain (retries and replays), and cancel or replay. Live until the attempt is final.
 */
import { dataFor, LIVE_STATUSES, NotFoundError, type Execution, type Job } from '@jobs/core';
import { outputResponse } from '@jobs/api';
import type { FC } from 'hono/jsx';
import { formatDuration, formatJson, formatUtc } from '../format';
import { renderLive } from '../render';
import { ActionButton, Duration, Pre, Status, When } from '../ui/components';
import { PageHeader } from '../ui/layout';
import { can, type DashRequest, type View } from '../view';

export const isLive = (e: Execution) => (LIVE_STATUSES as readonly string[]).includes(e.status);
const canReplay = (e: Execution) => e.status === 'dead' || e.status === 'failed';

const Step: FC<{ title: string; at: Date | null; now: Date; children?: unknown }> = ({ title, at, now, children }) => (
  <li class={at ? undefined : 'pending'}>
    <strong>{title}</strong> {at ? <When at={at} now={now} exact /> : <span class="muted">not yet</span>}
    {children ? <div class="muted">{children as never}</div> : null}
  </li>
);

const Timeline: FC<{ e: Execution; now: Date }> = ({ e, now }) => {
  const final = !isLive(e);
  const due = (
    <Step title="Due" at={e.scheduledFor} now={now}>
      {`${e.trigger} run, attempt ${e.attempt}`}
    </Step>
  );
  const queued = (
    <Step title="Queued" at={e.queuedAt} now={now}>
      {e.startedAt
        ? `waited ${formatDuration(Math.max(0, e.startedAt.getTime() - Math.max(e.queuedAt.getTime(), e.scheduledFor.getTime())))}`
        : undefined}
    </Step>
  );
  // In time order: a fire time queued ahead by the tick was queued before it was due.
  return (
    <ol class="timeline" aria-label="Timeline">
      {e.queuedAt < e.scheduledFor ? queued : due}
      {e.queuedAt < e.scheduledFor ? due : queued}
      <Step title="Started" at={e.startedAt} now={now}>
        {e.workerId ? `on ${e.workerId}` : undefined}
      </Step>
      {e.status === 'running' && e.leaseExpiresAt && (
        <Step title="Lease expires" at={e.leaseExpiresAt} now={now}>
          renewed by the worker's heartbeats; if it lapses the attempt is recovered
        </Step>
      )}
      <Step title={final ? `Finished: ${e.status}` : 'Finished'} at={e.finishedAt} now={now}>
        {e.finishedAt
          ? [
              e.exitCode !== null ? `exit code ${e.exitCode}` : null,
              e.durationMs !== null ? `ran ${formatDuration(e.durationMs)}` : null,
            ]
              .filter(Boolean)
              .join(', ') || undefined
          : undefined}
      </Step>
    </ol>
  );
};

const Chain: FC<{ chain: Execution[]; current: string; now: Date }> = ({ chain, current, now }) => (
  <ol class="chain">
    {chain.map((e) => (
      <li aria-current={e.id === current ? 'step' : undefined}>
        {e.id === current ? `#${e.id}` : <a href={`/executions/${e.id}`}>#{e.id}</a>} · attempt {e.attempt} ·{' '}
        {e.trigger}
        {e.retryOf && (
          <span class="muted">{` (${e.trigger === 'replay' ? 'replays' : 'retries'} #${e.retryOf})`}</span>
        )}{' '}
        · <Status status={e.status} />{' '}
        {e.replayedBy && (
          <span class="muted">
            · replayed as <a href={`/executions/${e.replayedBy}`}>#{e.replayedBy}</a>{' '}
          </span>
        )}
        <span class="muted">
          <When at={e.finishedAt ?? e.startedAt ?? e.queuedAt} now={now} />
        </span>
      </li>
    ))}
  </ol>
);

/** Each time a worker took this attempt: shown when there was more than one (it was given back or lost, then rerun). */
const Deliveries: FC<{ e: Execution; now: Date }> = ({ e, now }) => (
  <section class="panel" aria-labelledby="deliveries-heading">
    <h2 id="deliveries-heading" class="panel-title">
      Deliveries
    </h2>
    <p class="hint">
      This attempt was delivered {e.deliveries.length} times: a worker gave it back at shutdown, or was lost before its
      start was recorded, and it ran again as the same attempt. Its output is the last delivery's.
    </p>
    <ol class="chain" aria-label="Deliveries">
      {e.deliveries.map((d, i) => (
        <li>
          delivery {i + 1} · {d.workerId ? `on ${d.workerId}` : <span class="muted">worker unknown</span>} ·{' '}
          {d.outcome === 'released' ? (
            'released at shutdown'
          ) : d.outcome === 'lost' ? (
            'lost before its start was recorded'
          ) : (
            <Status status={d.outcome} />
          )}{' '}
          <span class="muted">
            {d.startedAt && (
              <>
                started <When at={d.startedAt} now={now} exact />{' '}
              </>
            )}
            {d.endedAt && (
              <>
                ended <When at={d.endedAt} now={now} exact />
              </>
            )}
          </span>
        </li>
      ))}
    </ol>
  </section>
);

/** Cancelling kills a running command, so it asks first: a link to a confirmation page (works without JS). */
const Actions: FC<{ e: Execution; view: View }> = ({ e, view }) =>
  !can(view, 'operate') ? null : (
    <div class="button-row">
      {isLive(e) && (
        <a class="btn btn-danger-link" href={`/executions/${e.id}/cancel`}>
          Cancel execution…
        </a>
      )}
      {canReplay(e) &&
        (e.replayedBy ? (
          <ActionButton
            view={view}
            action={`/executions/${e.id}/replay`}
            label="Replay again"
            fields={{ force: '1' }}
          />
        ) : (
          <ActionButton view={view} action={`/executions/${e.id}/replay`} label="Replay" tone="primary" />
        ))}
    </div>
  );

/** A running attempt's output so far; the script appends what follows, and removes the panel once it ends. */
const LiveOutput: FC<{ id: string; sofar: string }> = ({ id, sofar }) => (
  <section
    class="panel"
    aria-labelledby="live-output-heading"
    data-output-stream={`/executions/${id}/output?follow=true`}
  >
    <h2 id="live-output-heading" class="panel-title">
      Live output
    </h2>
    <p class="hint" data-output-status role="status">
      As of this page's rendering; reload for more.
    </p>
    <pre class="block" tabindex={0} role="log" aria-label="Live output" data-output-text>
      {sofar}
    </pre>
  </section>
);

/** A finished attempt's duration; a running one's time so far and when its timeout kills it. */
const RunTime: FC<{ e: Execution; job: Job | null; now: Date }> = ({ e, job, now }) => {
  if (e.status !== 'running' || !e.startedAt) return <Duration ms={e.durationMs} />;
  const elapsed = Math.max(0, now.getTime() - e.startedAt.getTime());
  const deadline = job ? new Date(e.startedAt.getTime() + job.timeoutMs) : null;
  return (
    <>
      <span class="nowrap">running for {formatDuration(elapsed)}</span>
      {job && deadline && (
        <>
          {' · '}
          <span class="nowrap">timeout {formatDuration(job.timeoutMs)}</span>{' '}
          <span class="muted">
            (stopped at <time datetime={deadline.toISOString()}>{formatUtc(deadline)}</time>)
          </span>
        </>
      )}
    </>
  );
};

export async function executionPage(r: DashRequest): Promise<Response> {
  const id = r.c.req.param('id')!;
  const role = r.view.principal?.role;
  const stored = await r.deps.store.executionGet(id);
  if (!stored) throw new NotFoundError('execution', id);
  // A read key sees the payload as the audit shows it (dataFor in @jobs/core).
  const e = dataFor(role, stored);
  const [found, chain] = await Promise.all([r.deps.store.jobGet(e.jobId), r.deps.store.executionChain(id)]);
  const job = found && dataFor(role, found);
  const now = r.view.now;

  const before = (
    <PageHeader
      title={`Execution #${e.id}`}
      subtitle={
        <>
          {job ? <a href={`/jobs/${job.id}`}>{job.name}</a> : <span>job #{e.jobId} (deleted)</span>} · {e.trigger} ·
          lane {e.lane}
        </>
      }
    />
  );

  const live = (
    <>
      <div class="status-line">
        <Status status={e.status} />
        <span>
          attempt {e.attempt}
          {e.deliveries.length > 1 && ` (delivery ${e.deliveries.length})`} · <RunTime e={e} job={job} now={now} />
        </span>
        {e.replayedBy && (
          <span class="replayed">
            Replayed as <a href={`/executions/${e.replayedBy}`}>execution #{e.replayedBy}</a>
          </span>
        )}
        <Actions e={e} view={r.view} />
      </div>
      <div class="grid-2">
        <section class="panel" aria-labelledby="timeline-heading">
          <h2 id="timeline-heading" class="panel-title">
            Timeline
          </h2>
          <Timeline e={e} now={now} />
        </section>
        <section class="panel" aria-labelledby="chain-heading">
          <h2 id="chain-heading" class="panel-title">
            Attempt chain
          </h2>
          <Chain chain={chain} current={e.id} now={now} />
          <p class="hint">Retries continue a chain; a replay starts a new one with a fresh retry budget.</p>
        </section>
      </div>
      {e.deliveries.length > 1 && <Deliveries e={e} now={now} />}
      <h2>Output</h2>
      {isLive(e) ? (
        <p class="muted">
          Running: its output so far is under "Live output" below; the whole output shows here once it ends.
        </p>
      ) : (
        <Pre text={e.output} label="Output" empty="No output." />
      )}
      <h2>Error</h2>
      <Pre text={e.error} label="Error" empty="No error." />
      <h2>Payload</h2>
      <Pre text={formatJson(e.payload)} label="Payload" empty="No payload." />
    </>
  );
  // Outside the live region (its refreshes would cut the stream): what the attempt printed so far, then, with
  // JavaScript, everything it prints from now on (the script follows /executions/:id/output?follow=true).
  const after = isLive(e) ? (
    <LiveOutput
      id={e.id}
      sofar={tail(
        (await (r.deps.liveOutput?.read(e.id, null) ?? Promise.resolve([])).catch(() => []))
          .map((x) => x.text)
          .join(''),
      )}
    />
  ) : undefined;
  return renderLive(r, {
    title: `Execution #${e.id}`,
    label: 'Execution status',
    before,
    live,
    after,
    final: !isLive(e),
    everyMs: 2000,
  });
}

/** The page shows at most this much of a running attempt's output so far (the newest); the stream has the rest. */
const SOFAR_CHARS = 256 * 1024;

/** `text` without what precedes its last SOFAR_CHARS characters, marked: a page must stay far below Lambda's 6 MB. */
function tail(text: string): string {
  if (text.length <= SOFAR_CHARS) return text;
  return `[… ${text.length - SOFAR_CHARS} characters before these …]\n${text.slice(text.length - SOFAR_CHARS)}`;
}

/** `/executions/:id/output`: the REST API's output (text, or events with ?follow=true) behind the dashboard's session. */
export function executionOutputStream(r: DashRequest): Promise<Response> {
  return outputResponse(r.c, r.deps, r.c.req.param('id')!, r.c.req.query('follow') === 'true');
}
