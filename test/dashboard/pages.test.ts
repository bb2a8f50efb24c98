/**
 * Dashboard pages and actions, in process on an open app (no API keys; the gate has its own tests): what the pages
 * show, that user strings are escaped and come back byte for byte, the job form, the schedule preview, live
 * fragments, every action, and the store reads behind the overview and the execution page.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextFireTimes, parseCron } from '@jobs/core';
import { formClient, unescapeHtml, type FormClient } from '../browser/form-client';
import { apiHarness, type Harness } from '../api/harness';

let h: Harness;
let b: FormClient;
beforeEach(async () => {
  h = await apiHarness();
  b = formClient(h.app);
});
afterEach(async () => {
  await h.cleanup();
});

/** Finishes an execution as a worker would have (the harness runs no worker). */
async function finish(
  id: string,
  status: 'succeeded' | 'failed' | 'dead',
  fields: { output?: string; error?: string; exitCode?: number } = {},
) {
  await h.env.pool.query(
    `UPDATE executions SET status = $2, started_at = now() - interval '2 seconds', finished_at = now(), duration_ms = 2000,
       worker_id = 'local-test-1', output = $3, error = $4, exit_code = $5 WHERE id = $1`,
    [id, status, fields.output ?? null, fields.error ?? null, fields.exitCode ?? null],
  );
}

async function trigger(jobId: string): Promise<string> {
  return (await h.call('POST', `/api/v1/jobs/${jobId}/trigger`)).body.id;
}

/** The text of the first `<pre aria-label="…">` with that label, unescaped. */
function preText(html: string, label: string): string | null {
  const match = new RegExp(`<pre[^>]*aria-label="${label}"[^>]*>([\\s\\S]*?)</pre>`).exec(html);
  // The renderer writes one newline after the tag, which HTML parsers drop.
  return match ? unescapeHtml(match[1]!).replace(/^\n/, '') : null;
}

describe('pages', () => {
  it('escapes every user string and shows it byte for byte', async () => {
    const name = `<script>alert("x")</script> & 'co' ü`;
    const command = '\nprintf "%s\\n" "<b>bold</b>"   \n\techo done ✓  ';
    const job = await h.createJob({ name, command, payload: { html: '<img src=x onerror=alert(1)>' } });
    const id = await trigger(job.id);
    const output = '\n  leading newline kept\n<tag attr="v">&amp;</tag>\r\nend  ';
    await finish(id, 'failed', { output, error: 'exit code 2', exitCode: 2 });

    for (const path of ['/jobs', `/jobs/${job.id}`, `/executions/${id}`, '/executions', `/jobs/${job.id}/delete`]) {
      const page = await b.request('GET', path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toContain('<script>alert');
      expect(page.text, path).not.toContain('<img src=x');
      expect(page.text, path).not.toContain('<b>bold</b>');
    }
    const jobPage = (await b.request('GET', `/jobs/${job.id}`)).text;
    expect(jobPage).toContain(`<h1>${'&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39; ü'}</h1>`);
    expect(preText(jobPage, 'Command')).toBe(command);
    const executionPage = (await b.request('GET', `/executions/${id}`)).text;
    expect(preText(executionPage, 'Output')).toBe(output);
    expect(preText(executionPage, 'Error')).toBe('exit code 2');
  });

  it('answers unknown ids with an HTML 404, and unknown paths as the API does', async () => {
    for (const path of ['/jobs/999', '/executions/999', '/jobs/999/delete', '/jobs/99999999999999999999']) {
      const res = await b.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.text).toContain('Not found');
    }
    const api = await h.call('GET', '/jobs/abc');
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe('not_found');
  });

  it('answers a live-region request with the region only', async () => {
    const job = await h.createJob({ name: 'live one' });
    const id = await trigger(job.id);
    const full = await b.request('GET', `/jobs/${job.id}`);
    expect(full.text).toContain('data-live="3000"');
    const fragment = await b.request('GET', `/jobs/${job.id}`, { headers: { 'X-Dashboard-Fragment': '1' } });
    expect(fragment.status).toBe(200);
    expect(fragment.text).not.toContain('<html');
    expect(fragment.text).toContain(`href="/executions/${id}"`);
    expect(fragment.headers.get('vary')).toContain('X-Dashboard-Fragment');

    // A finished execution's page marks its region final, so the script stops polling it.
    expect(
      (await b.request('GET', `/executions/${id}`, { headers: { 'X-Dashboard-Fragment': '1' } })).text,
    ).not.toContain('data-live-final');
    await finish(id, 'succeeded', { output: 'ok\n' });
    expect((await b.request('GET', `/executions/${id}`, { headers: { 'X-Dashboard-Fragment': '1' } })).text).toContain(
      'data-live-final',
    );
  });

  /** The value of the overview card with this label. */
  const card = (page: string, label: string) =>
    new RegExp(`<div class="card-value">([^<]*)</div><div class="card-label">${label}</div>`).exec(page)?.[1];

  it('shows the overview: counts, lanes, charts, oldest queued, workers', async () => {
    const job = await h.createJob({ name: 'counted' });
    await trigger(job.id);
    await finish(await trigger(job.id), 'succeeded');
    await h.env.pool.query(
      `INSERT INTO execution_minutes (minute, status, count, duration_ms) VALUES (date_trunc('minute', now()), 'succeeded', 7, 70), (date_trunc('minute', now()) - interval '5 minutes', 'dead', 2, 20)`,
    );
    const page = (await b.request('GET', '/')).text;
    expect(card(page, 'queued now, all due')).toBe('1');
    expect(card(page, 'due and waiting for a worker')).toBe('1');
    expect(card(page, 'longest wait of those')).not.toBe('—');
    expect(page).toContain('Finished attempts per minute, last hour: 9 in total');
    expect(page).toContain('2 failed or dead');
    expect(page.match(/<g><title>/g)?.length).toBeGreaterThanOrEqual(60);
    expect(page).toContain('Queue depth per lane');
    expect(page).toContain('active workers');
  });

  it('counts a run materialised ahead as queued but not due, and says what running and busy slots count', async () => {
    const job = await h.createJob({ name: 'ahead' });
    const ahead = await trigger(job.id);
    await h.env.pool.query(`UPDATE executions SET scheduled_for = now() + interval '10 minutes' WHERE id = $1`, [
      ahead,
    ]);
    const running = await trigger(job.id);
    await h.env.pool.query(
      `UPDATE executions SET status = 'running', started_at = now(), worker_id = 'gone-1' WHERE id = $1`,
      [running],
    );
    const page = (await b.request('GET', '/')).text;
    expect(card(page, 'due and waiting for a worker')).toBe('0');
    expect(card(page, 'longest wait of those')).toBe('—');
    expect(card(page, 'queued now, 1 of them not due yet')).toBe('1');
    expect(card(page, 'running now')).toBe('1');
    expect(card(page, 'active workers: 0 of 0 slots busy at their last heartbeat')).toBe('0');
    expect(page).toContain('an attempt whose worker stopped reporting stays running until its lease expires');
    expect((await h.call('GET', '/api/v1/stats')).body.counts.queued, 'the API counts it as before').toBe(1);
  });

  it('still shows the overview when Redis does not answer', async () => {
    h.deps.queue.depth = async () => {
      throw new Error('connection refused');
    };
    const page = await b.request('GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Redis did not answer');
    expect(JSON.stringify(h.rec.logs)).toContain('dashboard.queue_depth_failed');
  });

  it('lists jobs with their schedule in words, next run and last outcome', async () => {
    const job = await h.createJob({ name: 'nightly', cron_expr: '30 2 * * *', timezone: 'Europe/Paris' });
    await h.createJob({ name: 'manual one' });
    await finish(await trigger(job.id), 'dead', { error: 'exit code 1' });
    const page = (await b.request('GET', '/jobs')).text;
    expect(page).toContain('at 02:30 every day');
    expect(page).toContain('<code>30 2 * * *</code> <span class="muted">Europe/Paris</span>');
    expect(page).toContain('manual only');
    expect(page).toMatch(/aria-label="dead, execution \d+"/);
    const paused = (await b.request('GET', '/jobs?status=paused')).text;
    expect(paused).toContain('No jobs with status paused yet.');
  });
});

describe('the job form', () => {
  it('creates a job with every field mapped as the API maps it', async () => {
    const token = await b.csrf();
    const res = await b.request('POST', '/jobs', {
      form: {
        _csrf: token,
        name: 'form job',
        command: 'echo one\r\necho two',
        cron_expr: '0 9 * * 1-5',
        timezone: 'Europe/Paris',
        max_retries: '0',
        timeout_seconds: '900',
        lane: '',
        priority: '-5',
        overlap: 'forbid',
        misfire: 'catch_up',
        catch_up_max: '4',
        misfire_deadline_seconds: '3600',
        backoff_base_seconds: '0.5',
        backoff_factor: '3',
        backoff_max_seconds: '60',
        backoff_jitter: 'none',
        payload: '{"to":\r\n "ops"}',
        start_paused: 'on',
      },
    });
    expect(res.status).toBe(303);
    const id = /^\/jobs\/(\d+)$/.exec(res.headers.get('location')!)![1]!;
    const job = (await h.call('GET', `/api/v1/jobs/${id}`)).body;
    expect(job).toMatchObject({
      name: 'form job',
      command: 'echo one\necho two',
      cron_expr: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      max_retries: 0,
      timeout_seconds: 900,
      lane: 'long',
      priority: -5,
      overlap: 'forbid',
      misfire: 'catch_up',
      catch_up_max: 4,
      misfire_deadline_seconds: 3600,
      backoff: { base_seconds: 0.5, factor: 3, max_seconds: 60, jitter: 'none' },
      payload: { to: 'ops' },
      status: 'paused',
      next_run_at: null,
    });
    const page = (await b.request('GET', `/jobs/${id}`)).text;
    expect(page).toContain(`Job #${id} created.`);
    expect((await b.request('GET', `/jobs/${id}`)).text).not.toContain('created.');
  });

  /** Posts the job form; a refused or previewed one redirects to its draft, which is fetched (as a browser would). */
  async function submit(form: Record<string, string>) {
    const post = await b.request('POST', '/jobs', { form: { _csrf: await b.csrf(), ...form } });
    const location = post.headers.get('location') ?? '';
    const page = /^\/jobs\/new\?draft=[A-Za-z0-9_-]{16}$/.test(location) ? await b.request('GET', location) : null;
    return { post, location, page };
  }

  it('shows every problem beside its field and keeps what was typed, after a redirect (a reload never re-posts)', async () => {
    const { post, location, page } = await submit({
      name: '',
      command: '  echo "kept"',
      cron_expr: '0 0 30 2 *',
      timezone: 'UTC',
      max_retries: 'many',
      payload: '{oops',
      lane: 'short',
      timeout_seconds: '900',
    });
    expect(post.status).toBe(303);
    expect(page?.status).toBe(200);
    const res = page!;
    expect(res.text).toContain('<title>Error: new job');
    expect(res.text).toContain('problems to fix');
    expect(res.text).toMatch(/id="f-name"[^>]*aria-invalid="true"/);
    expect(res.text).toContain('never fires: day 30 does not occur in February');
    expect(res.text).toMatch(/id="f-max_retries-error">must be a number</);
    expect(res.text).toMatch(/id="f-payload-error">is not valid JSON/);
    expect(unescapeHtml(res.text)).toMatch(/<textarea id="f-command"[^>]*>\n {2}echo "kept"<\/textarea>/);
    expect(res.text).toMatch(/id="f-name-error">Enter a name.</);
    expect(res.text).toContain('value="0 0 30 2 *"');
    expect((await h.call('GET', '/api/v1/jobs')).body.data).toEqual([]);
    // Reloading is a GET of the same draft: the same form and problems, and still no job.
    const body = (html: string) => html.replace(/<footer[\s\S]*<\/footer>/, '');
    expect(body((await b.request('GET', location)).text)).toBe(body(res.text));
    expect((await h.call('GET', '/api/v1/jobs')).body.data).toEqual([]);
    // The form alone, without the draft's id, starts afresh (and drops the draft).
    const fresh = await b.request('GET', '/jobs/new');
    expect(fresh.text).not.toContain('problems to fix');
    expect(b.jar.has('jobs_draft')).toBe(false);

    // The lane rule of the API: the short lane refuses a timeout over its limit.
    const lane = await submit({ name: 'x', command: 'true', lane: 'short', timeout_seconds: '900' });
    expect(lane.page!.text).toMatch(/id="f-lane-error">the short lane allows timeout_seconds up to 600/);
  });

  it('lists the problems in the order the fields appear on the form', async () => {
    const { page } = await submit({
      payload: '{oops',
      backoff_factor: 'x',
      priority: '500',
      max_retries: 'many',
      run_at: 'soon',
      cron_expr: 'nope',
      name: '',
      command: 'true',
    });
    const html = page!.text;
    const summary = [...html.matchAll(/<li><a href="#(f-[a-z_]+)">/g)].map((m) => m[1]);
    const fields = [...html.matchAll(/<(?:input|textarea|select) id="(f-[a-z_]+)"[^>]*aria-invalid="true"/g)].map(
      (m) => m[1],
    );
    expect(summary.length).toBeGreaterThanOrEqual(6);
    expect(summary).toEqual(fields);
    expect(summary[0]).toBe('f-name');
    expect(summary.at(-1)).toBe('f-payload');
  });

  it('keeps the draft in a signed cookie for /jobs/new only, and answers in place when it would not fit', async () => {
    const { post, location } = await submit({ name: '', command: 'true' });
    const cookie = post.headers.getSetCookie().find((c) => c.startsWith('jobs_draft='))!;
    expect(cookie).toMatch(/Path=\/jobs\/new/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Max-Age=3600/);

    // Tampered, or another draft's id: the form says it is gone instead of showing anything.
    const value = b.jar.get('jobs_draft')!;
    b.jar.set('jobs_draft', value.slice(0, -2) + (value.endsWith('A') ? 'BB' : 'AA'));
    expect((await b.request('GET', location)).text).toContain('The form you were filling in is no longer here');
    b.jar.set('jobs_draft', value);
    expect((await b.request('GET', '/jobs/new?draft=AAAAAAAAAAAAAAAA')).text).toContain('no longer here');
    expect((await b.request('GET', location)).text).toContain('Enter a name.');

    // Too large for a cookie (incompressible payload): refused in place, as before, with nothing lost.
    const noise = Array.from({ length: 6000 }, () => Math.random().toString(36).slice(2, 3)).join('');
    const big = await b.request('POST', '/jobs', {
      form: { _csrf: await b.csrf(), name: '', command: 'true', payload: JSON.stringify(noise) },
    });
    expect(big.status).toBe(400);
    expect(big.text).toContain('Enter a name.');
    expect(big.text).toContain(noise);

    // Over https the cookie is Secure, with the prefix a cookie on a sub-path can have.
    const secure = formClient(h.app, { 'X-Forwarded-Proto': 'https' });
    const refused = await secure.request('POST', '/jobs', { form: { _csrf: await secure.csrf(), name: '' } });
    const secureCookie = refused.headers.getSetCookie().find((c) => c.startsWith('__Secure-jobs_draft='))!;
    expect(secureCookie).toMatch(/; Secure/);
    expect((await secure.request('GET', refused.headers.get('location')!)).text).toContain('Enter a name.');
  });

  it('offers the IANA zones to pick from and reads "Run once at" as a date and time in the zone picked', async () => {
    const form = (await b.request('GET', '/jobs/new')).text;
    const select = /<select id="f-timezone" name="timezone"[^>]*>([\s\S]*?)<\/select>/.exec(form)?.[1] ?? '';
    // UTC first and chosen, then every zone this Node knows, grouped by region.
    expect(select).toMatch(/^<option value="UTC" selected="">UTC<\/option><optgroup label="Africa">/);
    const offered = [...select.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(offered)).toEqual(new Set(['UTC', ...Intl.supportedValuesOf('timeZone')]));
    expect(select).toMatch(/<optgroup label="Europe">(?:(?!<\/optgroup>)[\s\S])*<option value="Europe\/Paris">/);
    expect(form).toMatch(/<input id="f-run_at" name="run_at" type="datetime-local" step="1" value=""/);

    const created = await submit({
      name: 'once in paris',
      command: 'true',
      timezone: 'Europe/Paris',
      run_at: '2030-01-01T09:00',
    });
    const id = /^\/jobs\/(\d+)$/.exec(created.location)?.[1];
    expect(id, created.page?.text.match(/<div class="error-summary"[\s\S]*?<\/div>/)?.[0]).toBeDefined();
    expect((await h.call('GET', `/api/v1/jobs/${id}`)).body).toMatchObject({
      timezone: 'Europe/Paris',
      run_at: '2030-01-01T08:00:00.000Z',
    });
    // A time the zone skips moves forward by the gap, as the scheduler's DST policy does for cron fire times.
    const gap = await submit({
      name: 'in the gap',
      command: 'true',
      timezone: 'Europe/Paris',
      run_at: '2030-03-31T02:30:00',
    });
    const gapId = /^\/jobs\/(\d+)$/.exec(gap.location)![1];
    expect((await h.call('GET', `/api/v1/jobs/${gapId}`)).body.run_at).toBe('2030-03-31T01:30:00.000Z');
    // An ISO instant with its offset (the API's form) is still taken as it is.
    const iso = await submit({ name: 'iso', command: 'true', timezone: 'Asia/Tokyo', run_at: '2030-01-01T09:00:00Z' });
    const isoId = /^\/jobs\/(\d+)$/.exec(iso.location)![1];
    expect((await h.call('GET', `/api/v1/jobs/${isoId}`)).body.run_at).toBe('2030-01-01T09:00:00.000Z');
  });

  it('refuses a run-once time that does not exist and a zone that is not offered, keeping both on the form', async () => {
    const missing = await submit({ name: 'feb 30', command: 'true', timezone: 'UTC', run_at: '2030-02-30T09:00' });
    expect(missing.page!.text).toMatch(/id="f-run_at-error">2030-02-30 09:00 is not a date and time that exists</);
    expect(missing.page!.text).toContain('value="2030-02-30T09:00"');
    const zone = await submit({ name: 'mars', command: 'true', timezone: 'Mars/Base', run_at: '2030-01-01T09:00' });
    expect(zone.page!.text).toMatch(/id="f-timezone-error">unknown time zone/);
    // The value posted stays selected, as an option of its own, so the error beside it makes sense.
    expect(zone.page!.text).toMatch(/<select id="f-timezone"[^>]*><option value="Mars\/Base" selected="">/);
    expect(zone.page!.text).toContain('value="2030-01-01T09:00"');
    expect((await h.call('GET', '/api/v1/jobs?limit=100')).body.data.map((j: any) => j.name)).not.toContain('mars');
  });

  it('refuses a duplicate name with 409, and previews without creating', async () => {
    await h.createJob({ name: 'taken' });
    const dup = await submit({ name: 'taken', command: 'true' });
    expect(dup.post.status).toBe(303);
    expect(dup.page!.text).toContain('a live job already has this name');
    expect(dup.page!.text).toContain('value="taken"');

    const preview = await submit({
      intent: 'preview',
      name: 'later',
      command: 'true',
      cron_expr: '*/15 9-17 * * mon-fri',
    });
    expect(preview.page!.status).toBe(200);
    expect(preview.page!.text).toContain('every 15 minutes from 09:00 to 17:45 on weekdays');
    expect(preview.page!.text).not.toContain('problems to fix');
    expect(preview.page!.text).toContain('value="later"');
    expect((await h.call('GET', '/api/v1/jobs')).body.data).toHaveLength(1);
  });

  it("previews fire times with the scheduler's own cron code, DST included", async () => {
    const res = await b.request('GET', '/jobs/preview?cron_expr=30+2+*+*+*&timezone=America%2FNew_York', {
      headers: { 'X-Dashboard-Fragment': '1' },
    });
    expect(res.status).toBe(200);
    const parsed = parseCron('30 2 * * *', 'America/New_York');
    if (!parsed.ok) throw new Error(parsed.error);
    const shown = [...res.text.matchAll(/datetime="([^"]+)"/g)].map((m) => m[1]);
    expect(shown).toHaveLength(5);
    const first = new Date(Date.parse(shown[0]!) - 1000);
    expect(shown).toEqual(nextFireTimes(parsed.schedule, first, 5).map((d) => d.toISOString()));
    expect(res.text).toContain('at 02:30 every day');

    for (const [query, message] of [
      ['cron_expr=0+0+30+2+*', 'never fires'],
      ['cron_expr=%40daily&timezone=Mars%2FBase', 'Time zone: unknown time zone'],
      ['cron_expr=', 'runs only when triggered'],
    ]) {
      expect((await b.request('GET', `/jobs/preview?${query}`)).text, query).toContain(message);
    }
  });
});

describe('actions', () => {
  it('triggers, pauses, resumes and deletes a job, each with a notice', async () => {
    const job = await h.createJob({ name: 'acted on', cron_expr: '@hourly' });
    const token = await b.csrf();
    const triggered = await b.request('POST', `/jobs/${job.id}/trigger`, {
      form: { _csrf: token, return_to: '/jobs' },
    });
    expect(triggered.status).toBe(303);
    expect(triggered.headers.get('location')).toBe('/jobs');
    const [execution] = (await h.call('GET', `/api/v1/jobs/${job.id}/executions`)).body.data;
    expect(execution).toMatchObject({ trigger: 'manual', status: 'queued' });
    expect((await b.request('GET', '/jobs')).text).toContain(
      `href="/executions/${execution.id}">Execution #${execution.id}</a>`,
    );

    expect((await b.request('POST', `/jobs/${job.id}/pause`, { form: { _csrf: token } })).headers.get('location')).toBe(
      `/jobs/${job.id}`,
    );
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).body).toMatchObject({ status: 'paused', next_run_at: null });
    expect((await b.request('GET', `/jobs/${job.id}`)).text).toContain('paused: no new runs start');
    await b.request('POST', `/jobs/${job.id}/resume`, { form: { _csrf: token } });
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).body).toMatchObject({
      status: 'active',
      next_run_at: expect.any(String),
    });

    // Deleting takes a confirmation page (a link), then a POST.
    const confirm = await b.request('GET', `/jobs/${job.id}/delete`);
    expect(confirm.text).toContain(`action="/jobs/${job.id}/delete"`);
    const deleted = await b.request('POST', `/jobs/${job.id}/delete`, {
      form: { _csrf: token, return_to: `/jobs/${job.id}` },
    });
    expect(deleted.headers.get('location')).toBe('/jobs');
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).status).toBe(404);
    expect((await h.call('GET', `/api/v1/executions/${execution.id}`)).body.status).toBe('cancelled');
    expect((await b.request('GET', '/jobs')).text).toContain(`Job #${job.id} deleted.`);
  });

  it('never redirects off-site after an action', async () => {
    const job = await h.createJob();
    for (const returnTo of ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)']) {
      const res = await b.request('POST', `/jobs/${job.id}/pause`, {
        form: { _csrf: await b.csrf(), return_to: returnTo },
      });
      expect(res.headers.get('location'), returnTo).toBe(`/jobs/${job.id}`);
    }
  });

  it('cancels a live execution after a confirmation page, and says so when it had already finished', async () => {
    const job = await h.createJob({ name: 'long one' });
    const id = await trigger(job.id);
    const token = await b.csrf();
    // One keystroke on the execution page only opens the confirmation (a link: it asks with and without JS).
    const page = (await b.request('GET', `/executions/${id}`)).text;
    expect(page).toContain(`<a class="btn btn-danger-link" href="/executions/${id}/cancel">Cancel execution…</a>`);
    expect(page).not.toContain(`action="/executions/${id}/cancel"`);
    const queued = (await b.request('GET', `/executions/${id}/cancel`)).text;
    expect(queued).toContain(`Cancel execution #${id} of “long one”?`);
    expect(queued).toContain('It is waiting to run');
    expect(queued).toContain(`action="/executions/${id}/cancel"`);
    expect(queued).toContain(`<a class="btn" href="/executions/${id}">Keep it</a>`);
    expect((await h.call('GET', `/api/v1/executions/${id}`)).body.status, 'asking changed nothing').toBe('queued');

    await h.env.pool.query(
      `UPDATE executions SET status = 'running', started_at = now() - interval '42 seconds', worker_id = 'local-w-9' WHERE id = $1`,
      [id],
    );
    const running = (await b.request('GET', `/executions/${id}/cancel`)).text;
    expect(running).toContain('It is running on local-w-9 since');
    expect(running).toContain('<strong>kills its command</strong>');
    expect(running).toContain('Keep it running');

    const cancelled = await b.request('POST', `/executions/${id}/cancel`, {
      form: { _csrf: token, return_to: `/executions/${id}` },
    });
    expect(cancelled.headers.get('location')).toBe(`/executions/${id}`);
    expect((await h.call('GET', `/api/v1/executions/${id}`)).body.status).toBe('cancelled');
    expect((await b.request('GET', `/executions/${id}`)).text).toContain(`Execution #${id} cancelled.`);
    await b.request('POST', `/executions/${id}/cancel`, { form: { _csrf: token } });
    const again = (await b.request('GET', `/executions/${id}`)).text;
    expect(again).toContain(`Execution #${id} is already cancelled`);
    expect(again).not.toContain(`/executions/${id}/cancel`);
    const late = await b.request('GET', `/executions/${id}/cancel`);
    expect(late.status).toBe(200);
    expect(late.text).toContain(`Execution #${id} is already cancelled`);
    expect(late.text).not.toContain(`action="/executions/${id}/cancel"`);
    expect((await b.request('GET', '/executions/999999/cancel')).status).toBe(404);
  });

  it("shows a running attempt's time so far and its timeout, and a stale sign for pages without JavaScript", async () => {
    const job = await h.createJob({ name: 'slow', timeout_seconds: 300 });
    const id = await trigger(job.id);
    await h.env.pool.query(
      `UPDATE executions SET status = 'running', started_at = now() - interval '42 seconds', worker_id = 'w-1' WHERE id = $1`,
      [id],
    );
    const page = (await b.request('GET', `/executions/${id}`)).text;
    expect(page).toMatch(/running for 4[2-4] s<\/span> · <span class="nowrap">timeout 5 min<\/span>/);
    const started = new Date((await h.call('GET', `/api/v1/executions/${id}`)).body.started_at);
    expect(page).toContain(`(stopped at <time datetime="${new Date(started.getTime() + 300_000).toISOString()}">`);
    expect(page).toMatch(
      /<noscript><p class="stale" role="note">Shown as of <time[^>]*>[^<]+<\/time>\. Without JavaScript this page does not update itself: <a href="\/executions\/\d+">reload it<\/a>/,
    );
    expect((await b.request('GET', '/executions')).text).toMatch(/4[2-4] s <span class="muted">so far<\/span>/);
    // The region's own refresh (for the script) carries no sign; a finished attempt's page needs none.
    expect(
      (await b.request('GET', `/executions/${id}`, { headers: { 'X-Dashboard-Fragment': '1' } })).text,
    ).not.toContain('noscript');
    await finish(id, 'succeeded');
    expect((await b.request('GET', `/executions/${id}`)).text).not.toContain('<noscript>');
  });

  it('gives focus back: to the row acted on in a list, else to the notice saying what happened', async () => {
    const job = await h.createJob({ name: 'focused' });
    const other = await h.createJob({ name: 'other' });
    const token = await b.csrf();
    const autofocused = (html: string) => [...html.matchAll(/<[a-z]+ [^>]*autofocus=""[^>]*>/g)].map((m) => m[0]);

    await b.request('POST', `/jobs/${job.id}/trigger`, { form: { _csrf: token, return_to: '/jobs' } });
    const afterRun = (await b.request('GET', '/jobs')).text;
    expect(autofocused(afterRun)).toEqual([
      '<button type="submit" class="btn btn-primary btn-small" aria-describedby="flash" autofocus="">',
    ]);
    expect(afterRun).toMatch(
      new RegExp(
        `action="/jobs/${job.id}/trigger" class="inline-form"><input[^>]*><input[^>]*><button[^>]*autofocus=""`,
      ),
    );
    expect(afterRun).toMatch(/<div id="flash" class="flash flash-ok" role="status" tabindex="-1">/);

    await b.request('POST', `/jobs/${other.id}/pause`, { form: { _csrf: token, return_to: '/jobs' } });
    const afterPause = (await b.request('GET', '/jobs')).text;
    expect(autofocused(afterPause)).toHaveLength(1);
    expect(afterPause).toMatch(
      new RegExp(
        `action="/jobs/${other.id}/resume" class="inline-form"><input[^>]*><input[^>]*><button[^>]*aria-describedby="flash" autofocus="">Resume`,
      ),
    );

    // On the job's own page, and after create, the notice takes focus.
    await b.request('POST', `/jobs/${other.id}/resume`, { form: { _csrf: token, return_to: `/jobs/${other.id}` } });
    expect(autofocused((await b.request('GET', `/jobs/${other.id}`)).text)).toEqual([
      '<div id="flash" class="flash flash-ok" role="status" tabindex="-1" autofocus="">',
    ]);
    // A row not on the page returned to (another filter) cannot take focus: the notice does.
    await b.request('POST', `/jobs/${other.id}/pause`, { form: { _csrf: token, return_to: '/jobs?status=active' } });
    expect(autofocused((await b.request('GET', '/jobs?status=active')).text)).toEqual([
      expect.stringMatching(/^<div id="flash"/),
    ]);
    const created = await b.request('POST', '/jobs', { form: { _csrf: token, name: 'new one', command: 'true' } });
    expect(autofocused((await b.request('GET', created.headers.get('location')!)).text)).toEqual([
      expect.stringMatching(/^<div id="flash"/),
    ]);
    // A refused form gives focus to its list of problems.
    const refused = await b.request('POST', '/jobs', { form: { _csrf: token, name: '' } });
    expect(autofocused((await b.request('GET', refused.headers.get('location')!)).text)).toEqual([
      expect.stringMatching(/^<div class="error-summary"/),
    ]);
  });

  it('replays one dead execution from its page, and many from the dead-letter page', async () => {
    const job = await h.createJob({ max_retries: 0 });
    const ids = [await trigger(job.id), await trigger(job.id), await trigger(job.id), await trigger(job.id)];
    for (const id of ids) await finish(id, 'dead', { error: 'exit code 1', output: `boom ${id}\n` });
    const alive = await trigger(job.id);
    const token = await b.csrf();

    const one = await b.request('POST', `/executions/${ids[0]}/replay`, { form: { _csrf: token } });
    const replayId = /^\/executions\/(\d+)$/.exec(one.headers.get('location')!)![1]!;
    expect((await h.call('GET', `/api/v1/executions/${replayId}`)).body).toMatchObject({
      trigger: 'replay',
      retry_of: ids[0],
      attempt: 1,
    });
    const replayPage = (await b.request('GET', `/executions/${replayId}`)).text;
    expect(replayPage).toContain('Replayed as a new attempt chain.');
    expect(replayPage).toContain(`(replays #${ids[0]})`);
    // The replayed execution says so, with a link to its replay; a second replay needs the explicit "Replay again".
    const replayedPage = (await b.request('GET', `/executions/${ids[0]}`)).text;
    expect(replayedPage).toContain(`Replayed as <a href="/executions/${replayId}">execution #${replayId}</a>`);
    expect(replayedPage).toContain('Replay again');
    expect(replayedPage).toContain('name="force" value="1"');
    const twice = await b.request('POST', `/executions/${ids[0]}/replay`, { form: { _csrf: token } });
    expect(twice.headers.get('location')).toBe(`/executions/${ids[0]}`);
    const refusedPage = (await b.request('GET', `/executions/${ids[0]}`)).text;
    expect(refusedPage).toContain(`Execution #${ids[0]} was replayed already`);
    expect(refusedPage).toContain(`href="/executions/${replayId}"`);

    const dead = (await b.request('GET', '/dead')).text;
    for (const id of ids)
      expect(dead).toContain(
        `<label class="pick" for="pick-${id}"><input type="checkbox" name="ids" value="${id}" id="pick-${id}"/><span class="pick-text">Select execution ${id}</span></label>`,
      );
    // "Replay selected" follows the checkboxes, and is the only submit button of their form (Enter replays the
    // selection); each row's own button submits a one-row form.
    const form = /<form method="post" action="\/dead\/replay" class="stacked" id="dead-form">([^]*?)<\/form>/.exec(
      dead,
    )![1]!;
    expect(form.lastIndexOf('type="checkbox"')).toBeLessThan(form.indexOf('Replay selected'));
    expect(form.match(/<button type="submit"(?![^>]*form="dead-one")/g)).toHaveLength(1);
    // ids[0] was replayed from its page above: its row links to the replay instead of offering a button.
    expect(form.match(/form="dead-one"/g)).toHaveLength(ids.length - 1);
    expect(form).toContain(`replayed as <a href="/executions/${replayId}">#${replayId}</a>`);
    expect(dead).toMatch(
      /<form method="post" action="\/dead\/replay" id="dead-one" hidden=""><input type="hidden" name="_csrf"/,
    );
    expect(dead).toContain(`boom ${ids[2]}`);
    const many = await b.request('POST', '/dead/replay', {
      form: { _csrf: token, ids: [ids[1]!, ids[2]!, alive, ids[1]!, 'junk'] },
    });
    expect(many.headers.get('location')).toBe('/dead');
    expect((await b.request('GET', '/dead')).text).toContain(
      'Replayed 2 executions. 1 execution could not be replayed',
    );
    const replays = (await h.call('GET', `/api/v1/jobs/${job.id}/executions?status=queued`)).body.data.filter(
      (e: any) => e.trigger === 'replay',
    );
    expect(replays.map((e: any) => e.retry_of).sort()).toEqual([ids[0], ids[1], ids[2]].sort());
    const deadAfter = (await b.request('GET', '/dead')).text;
    expect(deadAfter).toContain(`replayed as <a href="/executions/`);
    expect(deadAfter).toContain(`aria-label="Replay execution ${ids[3]}"`);
    expect(deadAfter).not.toContain(`aria-label="Replay execution ${ids[1]}"`);

    // One row's own button replays that row only, whatever is checked (the checked ones are replayed already).
    const only = await b.request('POST', '/dead/replay', {
      form: { _csrf: token, only: ids[3]!, ids: [ids[0]!, ids[1]!] },
    });
    expect(only.status).toBe(303);
    const after = (await h.call('GET', `/api/v1/jobs/${job.id}/executions`)).body.data.filter(
      (e: any) => e.trigger === 'replay',
    );
    expect(after.filter((e: any) => e.retry_of === ids[3])).toHaveLength(1);
    expect(after.filter((e: any) => e.retry_of === ids[0])).toHaveLength(1);
    // "Replay again" (force) from the execution's page starts a second chain.
    await b.request('POST', `/executions/${ids[0]}/replay`, { form: { _csrf: token, force: '1' } });
    const forced = (await h.call('GET', `/api/v1/jobs/${job.id}/executions`)).body.data.filter(
      (e: any) => e.trigger === 'replay' && e.retry_of === ids[0],
    );
    expect(forced).toHaveLength(2);

    const none = await b.request('POST', '/dead/replay', { form: { _csrf: token } });
    expect(none.status).toBe(303);
    expect((await b.request('GET', '/dead')).text).toContain('Select at least one execution to replay.');
  });
});

describe('store reads behind the pages', () => {
  it('executionOutcomesPerMinute: 60 minutes, oldest first, zeros included', async () => {
    await h.env.pool.query(
      `INSERT INTO execution_minutes (minute, status, count, duration_ms) VALUES
         (date_trunc('minute', now()), 'succeeded', 3, 30), (date_trunc('minute', now()), 'failed', 1, 10),
         (date_trunc('minute', now()) - interval '59 minutes', 'dead', 2, 0), (date_trunc('minute', now()) - interval '60 minutes', 'dead', 5, 0)`,
    );
    const minutes = await h.env.store.executionOutcomesPerMinute();
    expect(minutes).toHaveLength(60);
    expect(minutes[0]).toMatchObject({ succeeded: 0, failed: 0, dead: 2 });
    expect(minutes[59]).toMatchObject({ succeeded: 3, failed: 1, dead: 0 });
    expect(minutes[59]!.minute.getTime() - minutes[0]!.minute.getTime()).toBe(59 * 60_000);
    expect(minutes.slice(1, 59).every((m) => m.succeeded + m.failed + m.dead === 0)).toBe(true);
  });

  it('executionLastOutcomes: the latest finished attempt per job', async () => {
    const a = await h.createJob();
    const c = await h.createJob();
    const first = await trigger(a.id);
    const second = await trigger(a.id);
    await trigger(a.id);
    await finish(first, 'dead');
    await finish(second, 'succeeded');
    const outcomes = await h.env.store.executionLastOutcomes([a.id, c.id, 'junk']);
    expect([...outcomes.keys()]).toEqual([a.id]);
    expect(outcomes.get(a.id)).toMatchObject({ id: second, status: 'succeeded' });
  });

  it('executionChain: retries back to the first attempt, and the retries and replays made after it', async () => {
    const job = await h.createJob();
    const first = await trigger(job.id);
    await finish(first, 'failed');
    const insert = async (fields: {
      retryOf: string;
      rootId: string | null;
      attempt: number;
      trigger: string;
      status: string;
    }) =>
      (
        await h.env.pool.query(
          `INSERT INTO executions (job_id, root_id, retry_of, attempt, trigger, status, lane, scheduled_for) VALUES ($1, $2, $3, $4, $5, $6, 'short', now()) RETURNING id`,
          [job.id, fields.rootId, fields.retryOf, fields.attempt, fields.trigger, fields.status],
        )
      ).rows[0].id as string;
    const second = await insert({ retryOf: first, rootId: first, attempt: 2, trigger: 'retry', status: 'dead' });
    const unrelated = await trigger(job.id);
    const replay = await insert({ retryOf: second, rootId: null, attempt: 1, trigger: 'replay', status: 'queued' });
    const ids = (chain: { id: string }[]) => chain.map((e) => e.id);
    expect(ids(await h.env.store.executionChain(second))).toEqual([first, second, replay]);
    expect(ids(await h.env.store.executionChain(first))).toEqual([first, second, replay]);
    expect(ids(await h.env.store.executionChain(replay))).toEqual([first, second, replay]);
    expect(ids(await h.env.store.executionChain(unrelated))).toEqual([unrelated]);
    expect(await h.env.store.executionChain('999999')).toEqual([]);
    expect(await h.env.store.executionChain('x')).toEqual([]);
  });
});

describe('assets', () => {
  it('serves the stylesheet and the script, cacheable for good at their current version', async () => {
    const page = (await b.request('GET', '/jobs')).text;
    const css = /href="(\/assets\/dashboard\.css\?v=[0-9a-f]+)"/.exec(page)![1]!;
    const js = /src="(\/assets\/dashboard\.js\?v=[0-9a-f]+)"/.exec(page)![1]!;
    const style = await b.request('GET', css);
    expect(style.headers.get('content-type')).toMatch(/^text\/css/);
    expect(style.headers.get('cache-control')).toContain('immutable');
    const script = await b.request('GET', js);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.text).toContain('X-Dashboard-Fragment');
    const stale = await b.request('GET', '/assets/dashboard.css?v=old');
    expect(stale.headers.get('cache-control')).toBe('public, max-age=300');
    const revalidated = await b.request('GET', css, { headers: { 'If-None-Match': style.headers.get('etag')! } });
    expect(revalidated.status).toBe(304);
  });
});
