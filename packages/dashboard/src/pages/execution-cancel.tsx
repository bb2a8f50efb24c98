/**
 * @module dashboard/pages/execution-cancel — `/executions/:id/cancel`: the confirmation before cancelling, since a
 * running command is killed. A page of its own (not a script dialog), so it asks with and without JavaScript.
 */
import { NotFoundError } from '@jobs/core';
import { renderPage } from '../render';
import { ActionButton, Status, When } from '../ui/components';
import type { DashRequest } from '../view';
import { isLive } from './execution';

export async function cancelExecutionPage(r: DashRequest): Promise<Response> {
  const id = r.c.req.param('id')!;
  const e = await r.deps.store.executionGet(id);
  if (!e) throw new NotFoundError('execution', id);
  const job = await r.deps.store.jobGet(e.jobId);
  const now = r.view.now;
  const back = `/executions/${e.id}`;
  const what = job ? `“${job.name}”` : `job #${e.jobId}`;

  if (!isLive(e)) {
    const body = (
      <div class="panel confirm">
        <h1>
          Execution #{e.id} is already {e.status}
        </h1>
        <p>
          <Status status={e.status} /> Only queued, retrying or running executions can be cancelled; nothing was
          changed.
        </p>
        <p>
          <a href={back}>Back to execution #{e.id}</a>
        </p>
      </div>
    );
    return renderPage(r.c, r.view, { title: `Execution #${e.id}`, body });
  }

  const consequence =
    e.status === 'running' ? (
      <p>
        It is running{e.workerId ? ` on ${e.workerId}` : ''}
        {e.startedAt && (
          <>
            {' '}
            since <When at={e.startedAt} now={now} exact />
          </>
        )}
        . Cancelling <strong>kills its command</strong>: whatever it was doing stops part way, and it is not retried.
      </p>
    ) : (
      <p>
        It is {e.status === 'queued' ? 'waiting to run' : 'waiting to be retried'} (due{' '}
        <When at={e.scheduledFor} now={now} />
        ). Cancelling removes it: it will not run, and it is not retried.
      </p>
    );
  const body = (
    <div class="panel confirm">
      <h1>
        Cancel execution #{e.id} of {what}?
      </h1>
      {consequence}
      <p>The job itself stays as it is: its next scheduled runs still happen. Pause the job to stop those.</p>
      <div class="button-row">
        <ActionButton
          view={r.view}
          action={`/executions/${e.id}/cancel`}
          label="Cancel execution"
          tone="danger"
          returnTo={back}
        />
        <a class="btn" href={back}>
          {e.status === 'running' ? 'Keep it running' : 'Keep it'}
        </a>
      </div>
    </div>
  );
  return renderPage(r.c, r.view, { title: `Cancel execution #${e.id}`, body });
}
