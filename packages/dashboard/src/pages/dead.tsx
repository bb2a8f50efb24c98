/**
 * @module dashboard/pages/dead — `/dead`: executions that used up their retries; replay one, or many at once
 * (checkboxes and one button; "select all" appears with JS). Not live: a refresh would clear the selection.
 */
import { keysetPage } from '@jobs/api';
import { idParam, jobNames } from '../lookups';
import { renderPage } from '../render';
import { Cell, CsrfField, JobName, OutcomeExcerpt, Pager, Table, When } from '../ui/components';
import { PageHeader } from '../ui/layout';
import { can, type DashRequest } from '../view';

const PAGE_SIZE = 50;

export async function deadPage(r: DashRequest): Promise<Response> {
  const before = idParam(r.c.req.query('before'));
  const { store } = r.deps;
  const page = await keysetPage((n) => store.executionList({ status: 'dead', before, limit: n }), PAGE_SIZE, (e) => e);
  const names = await jobNames(store, page.data.map((e) => e.jobId));
  const now = r.view.now;
  const returnTo = r.c.req.path + (before ? `?before=${before}` : '');

  // A read key sees the rows, without the checkboxes and replay buttons it could not use.
  const operate = can(r.view, 'operate');
  const body = (
    <>
      <PageHeader
        title="Dead letter"
        subtitle="Attempts that failed with no retries left. Replaying runs one again as a new attempt chain with a fresh retry budget."
      />
      {page.data.length === 0 ? (
        <p class="empty">The dead letter queue is empty.</p>
      ) : (
        <>
          <form method="post" action="/dead/replay" class="stacked" id="dead-form">
            <CsrfField view={r.view} />
            <input type="hidden" name="return_to" value={returnTo} />
            {operate && (
              <div hidden>
                <label class="check">
                  <input type="checkbox" data-select-all="dead-form" /> Select all on this page
                </label>
              </div>
            )}
            <Table
              caption="Dead executions"
              headers={[...(operate ? ['Select'] : []), 'Execution', 'Job', 'Attempt', 'Died', 'Error', ...(operate ? ['Replay'] : [])]}
              rows={page.data.length}
            >
              {page.data.map((e) => (
                <tr>
                  {operate && (
                    <Cell label="Select" class="pick-cell">
                      {/* The whole label is the tap target (44 px and up), and on a phone it shows its text. */}
                      <label class="pick" for={`pick-${e.id}`}>
                        <input type="checkbox" name="ids" value={e.id} id={`pick-${e.id}`} />
                        <span class="pick-text">Select execution {e.id}</span>
                      </label>
                    </Cell>
                  )}
                  <Cell label="Execution">
                    <a href={`/executions/${e.id}`}>#{e.id}</a>
                  </Cell>
                  <Cell label="Job" class="wrap-anywhere">
                    <JobName jobId={e.jobId} names={names} />
                  </Cell>
                  <Cell label="Attempt">{e.attempt}</Cell>
                  <Cell label="Died">
                    <When at={e.finishedAt} now={now} />
                  </Cell>
                  <Cell label="Error">
                    <OutcomeExcerpt e={e} />
                  </Cell>
                  {operate && (
                  <Cell label="Replay">
                    {/* Submits the one-row form below, so this form's only submit button (and Enter) is "Replay selected". */}
                    {e.replayedBy ? (
                      <span>
                        replayed as <a href={`/executions/${e.replayedBy}`}>#{e.replayedBy}</a>
                      </span>
                    ) : (
                      <button type="submit" form="dead-one" class="btn btn-small" name="only" value={e.id} aria-label={`Replay execution ${e.id}`}>
                        Replay
                      </button>
                    )}
                  </Cell>
                  )}
                </tr>
              ))}
            </Table>
            {/* After the checkboxes, so ticking rows then Tab reaches it. */}
            {operate && (
              <div class="button-row">
                <button type="submit" class="btn btn-primary">
                  Replay selected
                </button>
              </div>
            )}
          </form>
          {operate && (
            <form method="post" action="/dead/replay" id="dead-one" hidden>
              <CsrfField view={r.view} />
              <input type="hidden" name="return_to" value={returnTo} />
            </form>
          )}
        </>
      )}
      <Pager path="/dead" params={{}} next={page.next_cursor} />
    </>
  );
  return renderPage(r.c, r.view, { title: 'Dead letter', body });
}
