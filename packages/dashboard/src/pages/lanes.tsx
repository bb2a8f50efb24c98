/**
 * @module dashboard/pages/lanes — `/lanes`: each lane paused or not, with its depths and a pause/resume button, and
 * the jobs whose attempts wait for a slot of their limits, and why (live).
 */
import { LANES, NotFoundError, setLanePaused, type Lane } from '@jobs/core';
import { setFlash } from '../flash';
import { renderLive } from '../render';
import { ActionButton, Cell, Status, Table, When } from '../ui/components';
import { PageHeader } from '../ui/layout';
import { can, type DashRequest } from '../view';

const LANE_WORDS: Record<Lane, string> = {
  short: 'short work, on Lambda or containers',
  long: 'long work, on containers',
};

export async function lanesPage(r: DashRequest): Promise<Response> {
  const [lanes, stats, depth, flow] = await Promise.all([
    r.deps.store.laneList(),
    r.deps.store.executionStats(),
    r.deps.queue.depth(),
    r.deps.queue.flowInspect(),
  ]);
  const names = await r.deps.store.jobNames(flow.map((f) => f.jobId));
  const waiting = flow
    .map((f) => ({ ...f, total: f.waiting.maxConcurrency + f.waiting.maxConcurrencyPerKey + f.waiting.rateLimit }))
    .sort((a, b) => b.total - a.total);
  const now = r.view.now;
  const operate = can(r.view, 'operate');
  const live = (
    <>
      <Table
        caption="Lanes"
        headers={['Lane', 'State', 'Queued', 'Running', 'Ready in Redis', 'Delayed', ...(operate ? ['Action'] : [])]}
        rows={lanes.length}
        empty="No lanes."
      >
        {lanes
          .filter((l) => (LANES as readonly string[]).includes(l.lane))
          .map((l) => (
            <tr>
              <Cell label="Lane">
                <strong>{l.lane}</strong> <span class="muted">({LANE_WORDS[l.lane]})</span>
              </Cell>
              <Cell label="State">
                {l.paused ? (
                  <>
                    <Status status="paused" /> <When at={l.pausedAt} now={now} />
                  </>
                ) : (
                  <Status status="active" />
                )}
              </Cell>
              <Cell label="Queued">{stats.byLane[l.lane].queued + stats.byLane[l.lane].retrying}</Cell>
              <Cell label="Running">{stats.byLane[l.lane].running}</Cell>
              <Cell label="Ready in Redis">{depth[l.lane].ready}</Cell>
              <Cell label="Delayed">{depth[l.lane].delayed}</Cell>
              {operate && (
                <Cell label="Action">
                  <ActionButton
                    view={r.view}
                    action={`/lanes/${l.lane}/${l.paused ? 'resume' : 'pause'}`}
                    label={l.paused ? `Resume ${l.lane}` : `Pause ${l.lane}`}
                    tone={l.paused ? 'primary' : 'plain'}
                    small
                  />
                </Cell>
              )}
            </tr>
          ))}
      </Table>
      <h2 id="limits-heading">Waiting for a slot</h2>
      <Table
        caption="Jobs whose attempts wait for a slot of their limits"
        headers={['Job', 'Holding a slot', 'Waiting', 'Job limit', 'Per key', 'Rate limit']}
        rows={waiting.length}
        empty="No attempt waits for a slot: every limited job has room."
      >
        {waiting.map((f) => (
          <tr>
            <Cell label="Job">
              <a href={`/jobs/${f.jobId}`}>{names.get(f.jobId) ?? `#${f.jobId}`}</a>
            </Cell>
            <Cell label="Holding a slot">{f.running}</Cell>
            <Cell label="Waiting">{f.total}</Cell>
            <Cell label="Job limit">{f.waiting.maxConcurrency}</Cell>
            <Cell label="Per key">{f.waiting.maxConcurrencyPerKey}</Cell>
            <Cell label="Rate limit">{f.waiting.rateLimit}</Cell>
          </tr>
        ))}
      </Table>
    </>
  );
  return renderLive(r, {
    title: 'Lanes',
    label: 'Lanes and limits',
    before: (
      <PageHeader
        title="Lanes"
        subtitle="A paused lane starts nothing new: triggers are still accepted and running attempts finish."
      />
    ),
    live,
  });
}

function laneOf(r: DashRequest): Lane {
  const lane = r.c.req.param('lane')!;
  if (!(LANES as readonly string[]).includes(lane)) throw new NotFoundError('lane', lane);
  return lane as Lane;
}

export async function pauseLaneAction(r: DashRequest): Promise<Response> {
  const lane = laneOf(r);
  await setLanePaused(r.commands, lane, true);
  setFlash(r.c, 'lane-paused', lane);
  return r.c.redirect('/lanes', 303);
}

export async function resumeLaneAction(r: DashRequest): Promise<Response> {
  const lane = laneOf(r);
  await setLanePaused(r.commands, lane, false);
  setFlash(r.c, 'lane-resumed', lane);
  return r.c.redirect('/lanes', 303);
}
