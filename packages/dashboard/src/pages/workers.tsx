/** @module dashboard/pages/workers — `/workers`: workers that heartbeated recently, with their load (live). */
import { formatDuration } from '../format';
import { renderLive } from '../render';
import { Cell, Table, When } from '../ui/components';
import { PageHeader } from '../ui/layout';
import type { DashRequest } from '../view';

export async function workersPage(r: DashRequest): Promise<Response> {
  const workers = await r.deps.store.workerListActive(r.deps.workerActiveWithinMs);
  const now = r.view.now;
  const capacity = workers.reduce((a, w) => a + w.concurrency, 0);
  const busy = workers.reduce((a, w) => a + w.inFlight, 0);

  const live = (
    <>
      <p>
        {workers.length === 1 ? '1 active worker' : `${workers.length} active workers`}, {busy} of {capacity} slots
        busy.
      </p>
      <Table
        caption="Active workers"
        headers={['Worker', 'Kind', 'Host', 'Lanes', 'In flight', 'Heartbeat', 'Up for', 'Version']}
        rows={workers.length}
        empty={`No worker has sent a heartbeat in the last ${formatDuration(r.deps.workerActiveWithinMs)}. Start one with npm run worker (locally) or check the worker service.`}
      >
        {workers.map((w) => (
          <tr>
            <Cell label="Worker" class="wrap-anywhere">
              <code>{w.id}</code>
            </Cell>
            <Cell label="Kind">{w.kind}</Cell>
            <Cell label="Host" class="wrap-anywhere">
              {w.host}
            </Cell>
            <Cell label="Lanes">{w.lanes.join(', ')}</Cell>
            <Cell label="In flight">
              <meter
                min={0}
                max={Math.max(1, w.concurrency)}
                value={w.inFlight}
                aria-label={`${w.inFlight} of ${w.concurrency} slots busy`}
              ></meter>{' '}
              {w.inFlight} / {w.concurrency}
            </Cell>
            <Cell label="Heartbeat">
              <When at={w.lastHeartbeatAt} now={now} />
            </Cell>
            <Cell label="Up for">{formatDuration(Math.max(0, now.getTime() - w.startedAt.getTime()))}</Cell>
            <Cell label="Version">{w.version}</Cell>
          </tr>
        ))}
      </Table>
    </>
  );
  return renderLive(r, {
    title: 'Workers',
    label: 'Active workers',
    before: (
      <PageHeader title="Workers" subtitle="Processes that drain the queue: local, container and Lambda workers." />
    ),
    live,
  });
}
