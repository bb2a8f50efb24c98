/**
 * @module dashboard/pages/overview — `/`: counts by status, queue depth per lane, the last hour's throughput and
 * failure rate, the oldest queued execution, active workers. Refreshes itself every few seconds.
 */
import { EXECUTION_STATUSES, LANES, type ExecutionStatus } from '@jobs/core';
import type { FC } from 'hono/jsx';
import { formatDuration, formatPercent } from '../format';
import { renderLive } from '../render';
import { ChartLegend, FailureRateChart, ThroughputChart } from '../ui/charts';
import { Cell, Status } from '../ui/components';
import { PageHeader } from '../ui/layout';
import type { DashRequest } from '../view';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const Card: FC<{ value: string | number; label: string; href?: string }> = ({ value, label, href }) => {
  const inner = (
    <>
      <div class="card-value">{value}</div>
      <div class="card-label">{label}</div>
    </>
  );
  return <li class="card">{href ? <a href={href}>{inner}</a> : inner}</li>;
};

/** What each status card counts: live statuses right now (queued split into due and ahead), final ones over 24 h. */
function statusLabel(status: ExecutionStatus, ahead: number): string {
  if (status === 'queued') return ahead === 0 ? 'queued now, all due' : `queued now, ${ahead} of them not due yet`;
  if (status === 'retrying') return 'waiting to retry now';
  if (status === 'running') return 'running now';
  return `${status}, last 24 h`;
}

export async function overviewPage(r: DashRequest): Promise<Response> {
  const { store, queue } = r.deps;
  const [stats, depth, minutes, workers] = await Promise.all([
    store.executionStats(),
    // Redis down must not take the whole page with it: PostgreSQL still knows the rest.
    queue.depth().catch((error: unknown) => {
      r.deps.logger.warn({ event: 'dashboard.queue_depth_failed', err: String(error) });
      return null;
    }),
    store.executionOutcomesPerMinute(60),
    store.workerListActive(r.deps.workerActiveWithinMs),
  ]);
  const finishedHour = minutes.reduce((a, m) => a + m.succeeded + m.failed + m.dead, 0);
  const failedHour = minutes.reduce((a, m) => a + m.failed + m.dead, 0);
  const capacity = workers.reduce((a, w) => a + w.concurrency, 0);
  const inFlight = workers.reduce((a, w) => a + w.inFlight, 0);

  const live = (
    <>
      <h2 id="now-heading">Right now</h2>
      <ul class="cards" aria-labelledby="now-heading">
        <Card value={stats.queuedDue} label="due and waiting for a worker" href="/executions?status=queued" />
        <Card
          value={stats.oldestQueuedAgeMs === null ? '—' : formatDuration(stats.oldestQueuedAgeMs)}
          label="longest wait of those"
        />
        <Card
          value={workers.length}
          label={`active workers: ${inFlight} of ${plural(capacity, 'slot', 'slots')} busy at their last heartbeat`}
          href="/workers"
        />
        <Card value={finishedHour} label="finished in the last hour" />
        <Card value={formatPercent(failedHour, finishedHour)} label="failed or dead, last hour" />
        <Card
          value={stats.durationMs.p50 === null ? '—' : formatDuration(stats.durationMs.p50)}
          label="median duration (p50)"
        />
        <Card value={stats.durationMs.p95 === null ? '—' : formatDuration(stats.durationMs.p95)} label="p95 duration" />
      </ul>

      <h2 id="status-heading">Executions by status</h2>
      <ul class="cards" aria-labelledby="status-heading">
        {EXECUTION_STATUSES.map((s) => (
          <Card
            value={stats.counts[s]}
            label={statusLabel(s, stats.counts.queued - stats.queuedDue)}
            href={`/executions?status=${s}`}
          />
        ))}
      </ul>
      <p class="hint">
        Running counts the attempts holding a lease in PostgreSQL; workers report their busy slots with each heartbeat,
        and an attempt whose worker stopped reporting stays running until its lease expires, so the two can differ for a
        while.
      </p>

      <div class="grid-2">
        <section class="panel" aria-labelledby="throughput-heading">
          <h2 id="throughput-heading" class="panel-title">
            Throughput, last hour
          </h2>
          <ThroughputChart minutes={minutes} />
          <ChartLegend />
        </section>
        <section class="panel" aria-labelledby="failure-heading">
          <h2 id="failure-heading" class="panel-title">
            Failure rate, last hour
          </h2>
          <FailureRateChart minutes={minutes} />
        </section>
      </div>

      <h2 id="lanes-heading">Queue depth per lane</h2>
      <div class="table-wrap">
        <table class="stack" aria-labelledby="lanes-heading">
          <thead>
            <tr>
              <th scope="col">Lane</th>
              <th scope="col" class="num">
                Ready
              </th>
              <th scope="col" class="num">
                Delayed
              </th>
              <th scope="col" class="num">
                Leased
              </th>
              <th scope="col" class="num">
                Dead-lettered
              </th>
              <th scope="col" class="num">
                Queued
              </th>
              <th scope="col" class="num">
                Retrying
              </th>
              <th scope="col" class="num">
                Running
              </th>
            </tr>
          </thead>
          <tbody>
            {LANES.map((lane) => (
              <tr>
                <Cell label="Lane">
                  <strong>{lane}</strong>
                </Cell>
                <Cell label="Ready" class="num">
                  {depth?.[lane].ready ?? '?'}
                </Cell>
                <Cell label="Delayed" class="num">
                  {depth?.[lane].delayed ?? '?'}
                </Cell>
                <Cell label="Leased" class="num">
                  {depth?.[lane].running ?? '?'}
                </Cell>
                <Cell label="Dead-lettered" class="num">
                  {depth?.[lane].dead ?? '?'}
                </Cell>
                <Cell label="Queued" class="num">
                  {stats.byLane[lane].queued}
                </Cell>
                <Cell label="Retrying" class="num">
                  {stats.byLane[lane].retrying}
                </Cell>
                <Cell label="Running" class="num">
                  {stats.byLane[lane].running}
                </Cell>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {depth === null && (
        <p class="field-error" role="status">
          Redis did not answer: its queue depths are unknown (shown as ?). PostgreSQL's counts are current.
        </p>
      )}
      <p class="hint">
        Ready, delayed (due later), leased and dead-lettered come from Redis; queued, retrying and running from
        PostgreSQL.{' '}
        {stats.counts.dead > 0 && (
          <>
            <Status status="dead" /> <a href="/dead">Review the dead letter queue</a>.
          </>
        )}
      </p>
    </>
  );

  return renderLive(r, {
    title: 'Overview',
    label: 'Live statistics',
    everyMs: 5000,
    before: <PageHeader title="Overview" subtitle="What is running, waiting and failing." />,
    live,
  });
}
