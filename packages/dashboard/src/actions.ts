/**
 * @module dashboard/actions — the dashboard's POST actions, through the same core commands as the REST routes.
 * Each answers with a redirect (POST, redirect, GET) and a one-shot notice; the gate has already checked the
 * session and the CSRF token.
 */
import {
  cancelExecution,
  deleteJob,
  NotFoundError,
  pauseJob,
  replayExecution,
  resumeJob,
  triggerJob,
} from '@jobs/core';
import { setFlash } from './flash';
import { localPath, type DashRequest } from './view';

/** At most this many executions are replayed by one bulk request. */
const MAX_BULK_REPLAY = 200;

const param = (r: DashRequest) => r.c.req.param('id')!;
const back = (r: DashRequest, fallback: string) => r.c.redirect(localPath(r.form.get('return_to'), fallback), 303);

export async function triggerAction(r: DashRequest): Promise<Response> {
  const { execution } = await triggerJob(r.commands, { jobId: param(r) });
  setFlash(r.c, 'triggered', execution.id, param(r));
  return back(r, `/jobs/${param(r)}`);
}

export async function pauseAction(r: DashRequest): Promise<Response> {
  const job = await pauseJob(r.commands, param(r));
  setFlash(r.c, 'paused', job.id);
  return back(r, `/jobs/${job.id}`);
}

export async function resumeAction(r: DashRequest): Promise<Response> {
  const job = await resumeJob(r.commands, param(r));
  setFlash(r.c, 'resumed', job.id);
  return back(r, `/jobs/${job.id}`);
}

export async function deleteAction(r: DashRequest): Promise<Response> {
  await deleteJob(r.commands, param(r));
  setFlash(r.c, 'deleted', param(r));
  return r.c.redirect('/jobs', 303);
}

export async function cancelAction(r: DashRequest): Promise<Response> {
  const id = param(r);
  const result = await cancelExecution(r.commands, id);
  if (result.cancelled) setFlash(r.c, 'cancelled', id);
  else setFlash(r.c, 'cancel-late', id, result.status);
  return back(r, `/executions/${id}`);
}

type ReplayOutcome =
  | { ok: true; newId: string }
  | { ok: false; reason: 'refused' | 'deleted'; status: string }
  | { ok: false; reason: 'replayed'; replayedBy: string };

async function replayOne(r: DashRequest, id: string, force = false): Promise<ReplayOutcome> {
  try {
    const result = await replayExecution(r.commands, id, { force });
    if (result.execution) return { ok: true, newId: result.execution.id };
    if (result.replayedBy !== null && (result.status === 'dead' || result.status === 'failed'))
      return { ok: false, reason: 'replayed', replayedBy: result.replayedBy };
    return { ok: false, reason: 'refused', status: result.status };
  } catch (error) {
    // The store cannot replay an execution of a deleted job and reports it as unknown (as in the REST route).
    if (error instanceof NotFoundError && (await r.deps.store.executionGet(id)))
      return { ok: false, reason: 'deleted', status: 'dead' };
    throw error;
  }
}

export async function replayAction(r: DashRequest): Promise<Response> {
  const id = param(r);
  // "Replay again" on a replayed execution's page posts force=1: one click there is the explicit second replay.
  const outcome = await replayOne(r, id, r.form.get('force') === '1');
  if (outcome.ok) {
    setFlash(r.c, 'replayed', outcome.newId);
    return r.c.redirect(`/executions/${outcome.newId}`, 303);
  }
  if (outcome.reason === 'replayed') setFlash(r.c, 'replay-already', id, outcome.replayedBy);
  else if (outcome.reason === 'deleted') setFlash(r.c, 'replay-deleted', id);
  else setFlash(r.c, 'replay-refused', id, outcome.status);
  return back(r, `/executions/${id}`);
}

/** Replays the checked executions (`ids`), or the one row whose own button was pressed (`only`). */
export async function bulkReplayAction(r: DashRequest): Promise<Response> {
  const only = r.form.get('only');
  const picked = only !== null ? [only] : r.form.getAll('ids');
  const ids = [...new Set(picked.filter((id) => /^[1-9][0-9]{0,17}$/.test(id)))].slice(0, MAX_BULK_REPLAY);
  if (ids.length === 0) {
    setFlash(r.c, 'replay-none');
    return back(r, '/dead');
  }
  let done = 0;
  let refused = 0;
  let single: ReplayOutcome | null = null;
  for (const id of ids) {
    try {
      single = await replayOne(r, id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      single = { ok: false, reason: 'refused', status: 'unknown' };
    }
    if (single.ok) done += 1;
    else refused += 1;
  }
  if (ids.length === 1 && single?.ok) setFlash(r.c, 'replayed', single.newId);
  else setFlash(r.c, 'replayed-many', done, refused);
  return back(r, '/dead');
}
