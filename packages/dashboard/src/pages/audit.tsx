/**
 * @module dashboard/pages/audit — `/audit` (admin): who changed what, newest first, filtered by key, action and
 * target, and the dashboard sessions open now (by key name, where from, since when). Values are shown as recorded:
 * the store masked secret-looking fields before they were written.
 */
import { AUDIT_ACTIONS, type AuditAction } from '@jobs/core';
import { keyFingerprint, keysetPage } from '@jobs/api';
import { idParam } from '../lookups';
import { renderPage } from '../render';
import { Cell, Pager, Table, When } from '../ui/components';
import { PageHeader } from '../ui/layout';
import { sessionTarget } from './login';
import type { DashRequest } from '../view';

const PAGE_SIZE = 50;
const MAX_SESSIONS = 100;
const short = (value: string | undefined, max: number) => (value && value.length <= max ? value : undefined);

/** `field: old → new` for each changed field, JSON-encoded so types show (`null`, `"text"`, `3`). */
function changeText(changes: Record<string, { old: unknown; new: unknown }> | null): string {
  if (!changes) return '—';
  return Object.entries(changes)
    .map(([field, c]) => `${field}: ${JSON.stringify(c.old)} → ${JSON.stringify(c.new)}`)
    .join('; ');
}

/**
 * A request id on one line: its head, then an ellipsis. A generated id is a UUID, which wrapped to six lines in the
 * narrow column; the whole id stays in the text (copy it, find it with the browser's search) and in the tooltip.
 */
function RequestId({ id }: { id: string }) {
  return (
    <code class="clip-id" title={id}>
      {id}
    </code>
  );
}

export async function auditPage(r: DashRequest): Promise<Response> {
  const q = r.c.req.query();
  const key = short(q.key?.trim(), 64) || undefined;
  const target = short(q.target?.trim(), 200) || undefined;
  const action = (AUDIT_ACTIONS as readonly string[]).includes(q.action ?? '') ? (q.action as AuditAction) : undefined;
  const before = idParam(q.before);
  const { store } = r.deps;
  const [page, sessions] = await Promise.all([
    keysetPage(
      (n) => store.auditList({ keyName: key, action, target, before, limit: n }),
      PAGE_SIZE,
      (row) => row,
    ),
    store.sessionListLive({
      fingerprints: r.keys.keys.map((k) => keyFingerprint(k.key)),
      now: r.view.now,
      limit: MAX_SESSIONS,
    }),
  ]);
  const now = r.view.now;

  const filters = (
    <form method="get" action="/audit" class="filters" role="search" aria-label="Filter the audit trail">
      <div class="field">
        <label for="filter-key">Key name</label>
        <input id="filter-key" name="key" value={key ?? ''} maxlength={64} />
      </div>
      <div class="field">
        <label for="filter-action">Action</label>
        <select id="filter-action" name="action">
          <option value="">any</option>
          {AUDIT_ACTIONS.map((a) => (
            <option value={a} selected={a === action}>
              {a}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-target">Target</label>
        <input id="filter-target" name="target" value={target ?? ''} placeholder="job:42" maxlength={200} />
      </div>
      <button type="submit" class="btn">
        Filter
      </button>
      {(key || action || target) && <a href="/audit">Clear filters</a>}
    </form>
  );

  const body = (
    <>
      <PageHeader
        title="Audit"
        subtitle="Every change made through the API or this dashboard, and every attempt refused for its role, newest first."
      />
      {filters}
      <Table
        caption="Audit trail"
        headers={['When', 'Key', 'Action', 'Target', 'Outcome', 'Changes', 'Source', 'Request']}
        rows={page.data.length}
        empty="No audit rows match."
      >
        {page.data.map((row) => (
          <tr>
            <Cell label="When">
              <When at={row.at} now={now} />
            </Cell>
            <Cell label="Key">{row.keyName}</Cell>
            <Cell label="Action">{row.action}</Cell>
            <Cell label="Target" class="wrap-anywhere">
              {row.target}
            </Cell>
            <Cell label="Outcome">{row.outcome === 'ok' ? 'done' : <strong>refused</strong>}</Cell>
            <Cell label="Changes" class="wrap-anywhere">
              {changeText(row.changes)}
            </Cell>
            <Cell label="Source">{row.source ?? '—'}</Cell>
            <Cell label="Request">{row.requestId ? <RequestId id={row.requestId} /> : '—'}</Cell>
          </tr>
        ))}
      </Table>
      <Pager path="/audit" params={{ key, action, target }} next={page.next_cursor} />
      <h2 id="sessions-heading">Open sessions</h2>
      <Table
        caption="Dashboard sessions open now"
        headers={['Session', 'Key', 'From', 'Signed in', 'Last seen', 'Expires']}
        rows={sessions.length}
        empty="No open sessions."
      >
        {sessions.map((s) => (
          <tr>
            <Cell label="Session">
              <code>{sessionTarget(s.tokenHash)}</code>
            </Cell>
            <Cell label="Key">{s.keyName}</Cell>
            <Cell label="From">{s.source ?? '—'}</Cell>
            <Cell label="Signed in">
              <When at={s.createdAt} now={now} />
            </Cell>
            <Cell label="Last seen">
              <When at={s.lastSeenAt} now={now} />
            </Cell>
            <Cell label="Expires">
              <When at={s.expiresAt} now={now} />
            </Cell>
          </tr>
        ))}
      </Table>
    </>
  );
  return renderPage(r.c, r.view, { title: 'Audit', body });
}
