/**
 * @module dashboard/pages/dead — `/dead`: executions that used up their retries; replay one, or many at once
 * (checkboxes and one button; "select all" appears with JS). Not live: a refresh would clear the selection.
 */
import { keysetPage } from '@jobs/api';
import { idParam, listJobNames } from '../lookups';
import { renderPage } from '../render';
import type { ExecutionSummary } from '@jobs/core';
import { CsrfField, Pager, Table, cellHtml, jobNameHtml, markup, outcomeExcerptHtml, whenHtml } from '../ui/components';
import { PageHeader } from '../ui/layout';
import { can, type DashRequest } from '../view';

const PAGE_SIZE = 50;
/** List rows carry a bounded error and output tail, so fifty of them need no byte cap (and no serializing to measure). */
const LIST_ROWS = { maxBytes: Infinity };

export async function deadPage(r: DashRequest): Promise<Response> {
  const before = idParam(r.c.req.query('before'));
  const { store } = r.deps;
  const page = await keysetPage(
    (n) => store.executionList({ status: 'dead', before, limit: n, jobNames: true }),
    PAGE_SIZE,
    (e) => e,
    LIST_ROWS,
  );
  const names = listJobNames(page.data);
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
              headers={[
                ...(operate ? ['Select'] : []),
                'Execution',
                'Job',
                'Attempt',
                'Died',
                'Error',
                ...(operate ? ['Replay'] : []),
              ]}
              rows={page.data.length}
            >
              {page.data.map((e) => deadRow(e, now, names, operate))}
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

/** One dead execution's row (a template: see ui/components). The replay button submits the one-row form "dead-one". */
function deadRow(e: ExecutionSummary, now: Date, names: Map<string, string>, operate: boolean) {
  // The whole label of the checkbox is the tap target (44 px and up), and on a phone it shows its text.
  const pick = markup`<label class="pick" for="pick-${e.id}"><input type="checkbox" name="ids" value="${e.id}" id="pick-${e.id}"/><span class="pick-text">Select execution ${e.id}</span></label>`;
  // Submits the one-row form below, so the list form's only submit button (and Enter) is "Replay selected".
  const replay = e.replayedBy
    ? markup`<span>replayed as <a href="/executions/${e.replayedBy}">#${e.replayedBy}</a></span>`
    : markup`<button type="submit" form="dead-one" class="btn btn-small" name="only" value="${e.id}" aria-label="Replay execution ${e.id}">Replay</button>`;
  return markup`<tr>${operate ? cellHtml('Select', pick, 'pick-cell') : ''}${cellHtml('Execution', markup`<a href="/executions/${e.id}">#${e.id}</a>`)}${cellHtml(
    'Job',
    jobNameHtml(e.jobId, names),
    'wrap-anywhere',
  )}${cellHtml('Attempt', e.attempt)}${cellHtml('Died', whenHtml(e.finishedAt, now))}${cellHtml('Error', outcomeExcerptHtml(e))}${operate ? cellHtml('Replay', replay) : ''}</tr>`;
}
