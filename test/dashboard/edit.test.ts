/** The dashboard's edit and backfill forms in process (the browser test drives the happy path in chromium). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formClient, unescapeHtml, type FormClient } from '../browser/form-client';
import { apiHarness, type Harness } from '../api/harness';

let h: Harness;
let b: FormClient;
beforeAll(async () => {
  h = await apiHarness();
  b = formClient(h.app);
});
afterAll(async () => {
  await h.cleanup();
});

/** The edit form's fields as the browser would post them: the prefilled values, with `changes` on top. */
async function editForm(id: string, changes: Record<string, string>) {
  const page = await b.request('GET', `/jobs/${id}/edit`);
  expect(page.status).toBe(200);
  const form: Record<string, string> = {};
  for (const m of page.text.matchAll(/<input([^>]*)name="([a-z_]+)"[^>]*value="([^"]*)"[^>]*>/g)) {
    // A browser posts a checkbox only when it is ticked.
    if (/type="checkbox"/.test(m[0]) && !/\schecked/.test(m[0])) continue;
    form[m[2]!] = unescapeHtml(m[3]!);
  }
  for (const m of page.text.matchAll(/<textarea[^>]*name="([a-z_]+)"[^>]*>([\s\S]*?)<\/textarea>/g))
    form[m[1]!] = unescapeHtml(m[2]!).replace(/^\n/, '');
  for (const m of page.text.matchAll(/<select[^>]*name="([a-z_]+)"[\s\S]*?<option[^>]*value="([^"]*)"[^>]*selected/g))
    form[m[1]!] = m[2]!;
  return { ...form, ...changes };
}

describe('dashboard edit', () => {
  it('prefills, saves as a new version by the signed-in key (anonymous when open), keeps managed_by, and refuses what create refuses', async () => {
    const job = await h.createJob({ cron_expr: '*/5 * * * *', managed_by: 'jobs-apply', payload: { team: 'ops' } });
    const saved = await b.request('POST', `/jobs/${job.id}/edit`, {
      form: await editForm(job.id, { cron_expr: '*/10 * * * *' }),
    });
    expect(saved.status, saved.text.match(/<div class="error-summary"[\s\S]*?<\/div>/)?.[0]).toBe(303);
    const after = await h.env.store.jobGet(job.id);
    expect(after).toMatchObject({
      cronExpr: '*/10 * * * *',
      managedBy: 'jobs-apply',
      version: 2,
      payload: { team: 'ops' },
    });
    const versions = await h.env.store.jobVersions(job.id);
    expect(versions![0]).toMatchObject({
      actor: 'anonymous',
      changes: [{ field: 'cron_expr', old: '*/5 * * * *', new: '*/10 * * * *' }],
    });

    const refused = await b.request('POST', `/jobs/${job.id}/edit`, {
      form: await editForm(job.id, { cron_expr: '0 0 30 2 *', priority: '500' }),
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/never fires/);
    expect(refused.text).toMatch(/Priority: /);
    const other = await h.createJob();
    const clash = await b.request('POST', `/jobs/${job.id}/edit`, {
      form: await editForm(job.id, { name: other.name }),
    });
    expect(clash.status).toBe(409);
    expect(clash.text).toContain('another live job has this name');
    expect((await h.env.store.jobGet(job.id))!.version).toBe(2);
    expect((await b.request('GET', '/jobs/999999/edit')).status).toBe(404);
  });

  it("shows a run-once time in the job's own zone, and saves an unchanged one unchanged", async () => {
    const job = await h.createJob({ run_at: '2030-01-01T08:00:00Z', timezone: 'Europe/Paris' });
    const form = await editForm(job.id, {});
    expect(form.run_at).toBe('2030-01-01T09:00:00');
    expect(form.timezone).toBe('Europe/Paris');
    const saved = await b.request('POST', `/jobs/${job.id}/edit`, { form: { ...form, priority: '3' } });
    expect(saved.status, saved.text.match(/<div class="error-summary"[\s\S]*?<\/div>/)?.[0]).toBe(303);
    const after = await h.env.store.jobGet(job.id);
    expect(after!.runAt!.toISOString()).toBe('2030-01-01T08:00:00.000Z');
    expect((await h.env.store.jobVersions(job.id))![0]!.changes).toEqual([{ field: 'priority', old: 0, new: 3 }]);
    // Moved to Tokyo at the same wall time: the instant moves with the zone.
    await b.request('POST', `/jobs/${job.id}/edit`, {
      form: { ...(await editForm(job.id, {})), timezone: 'Asia/Tokyo' },
    });
    expect((await h.env.store.jobGet(job.id))!.runAt!.toISOString()).toBe('2030-01-01T00:00:00.000Z');
  });

  it('edits an HTTP job without retyping its secret header: the form shows it masked, the save keeps it, no page shows it', async () => {
    const job = await h.createJob({
      command: null,
      http: {
        url: 'https://api.example.com/hooks/a',
        headers: { Authorization: 'Bearer s3cret-edit-value', 'X-Team': 'ops' },
      },
    });
    const form = await editForm(job.id, { http_url: 'https://api.example.com/hooks/b' });
    expect(form.http_headers).toContain('Authorization: ********');
    expect(JSON.stringify(form)).not.toContain('s3cret-edit-value');
    const saved = await b.request('POST', `/jobs/${job.id}/edit`, { form });
    expect(saved.status, saved.text.match(/<div class="error-summary"[\s\S]*?<\/div>/)?.[0]).toBe(303);
    const after = await h.env.store.jobGet(job.id);
    expect(after!.http).toMatchObject({
      url: 'https://api.example.com/hooks/b',
      headers: { Authorization: 'Bearer s3cret-edit-value', 'X-Team': 'ops' },
    });
    expect(after!.version).toBe(2);
    // A header change is recorded in the version with both sides masked, on the page and in the API.
    const headerEdit = await b.request('POST', `/jobs/${job.id}/edit`, {
      form: await editForm(job.id, { http_headers: 'Authorization: Bearer n3w-secret-value\nX-Team: ops' }),
    });
    expect(headerEdit.status).toBe(303);
    const page = await b.request('GET', `/jobs/${job.id}`);
    expect(page.text).toContain('Version history');
    const api = await h.call('GET', `/api/v1/jobs/${job.id}/versions`);
    for (const text of [page.text, JSON.stringify(api.body)]) {
      expect(text).not.toContain('s3cret-edit-value');
      expect(text).not.toContain('n3w-secret-value');
    }
    expect((await h.env.store.jobGet(job.id))!.http!.headers.Authorization).toBe('Bearer n3w-secret-value');
  });

  it('backfill: the dry run lists fire times and creates nothing; bad ranges are refused in place', async () => {
    const job = await h.createJob({ cron_expr: '0 * * * *', handler: 'noop', command: null });
    const token = await b.csrf();
    const dry = await b.request('POST', `/jobs/${job.id}/backfill`, {
      form: { _csrf: token, from: '2025-03-09T00:00:00Z', to: '2025-03-09T02:00:00Z', intent: 'preview' },
    });
    expect(dry.status).toBe(200);
    expect(dry.text).toContain('2 fire times in this range');
    expect((await h.env.store.executionList({ jobId: job.id, limit: 10 })).length).toBe(0);
    for (const [from, to, message] of [
      ['yesterday', '2025-03-09T02:00:00Z', /ISO 8601/],
      ['2025-03-09T02:00:00Z', '2025-03-09T00:00:00Z', /after from/],
      ['2025-01-01T00:00:00Z', '2025-03-01T00:00:00Z', /more than 1000/],
    ] as const) {
      const res = await b.request('POST', `/jobs/${job.id}/backfill`, {
        form: { _csrf: token, from, to, intent: 'run' },
      });
      expect(res.status, `${from} ${to}`).toBe(400);
      expect(res.text).toMatch(message);
    }
    const run = await b.request('POST', `/jobs/${job.id}/backfill`, {
      form: { _csrf: token, from: '2025-03-09T00:00:00Z', to: '2025-03-09T02:00:00Z', intent: 'run' },
    });
    expect(run.status).toBe(303);
    const created = await h.env.store.executionList({ jobId: job.id, limit: 10 });
    expect(created.map((e) => e.trigger)).toEqual(['backfill', 'backfill']);
    // A second preview over a longer range says which fire times already ran, with a link to each.
    const again = await b.request('POST', `/jobs/${job.id}/backfill`, {
      form: { _csrf: token, from: '2025-03-09T00:00:00Z', to: '2025-03-09T03:00:00Z', intent: 'preview' },
    });
    expect(again.text).toContain('3 fire times in this range');
    expect(again.text).toContain('2 of them already ran and will be skipped; the backfill creates 1.');
    for (const e of created) expect(again.text).toContain(`<a href="/executions/${e.id}">execution #${e.id}</a>`);
  });
});
