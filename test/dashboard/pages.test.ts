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
async function finish(id: string, status: 'succeeded' | 'failed' | 'dead', fields: { output?: string; error?: string; exitCode?: number } = {}) {
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
    expect((await b.request('GET', `/executions/${id}`, { headers: { 'X-Dashboard-Fragment': '1' } })).text).not.toContain('data-live-final');
    await finish(id, 'succeeded', { output: 'ok\n' });
    expect((await b.request('GET', `/executions/${id}`, { headers: { 'X-Dashboard-Fragment': '1' } })).text).toContain('data-live-final');
  });

  it('shows the overview: counts, lanes, charts, oldest queued, workers', async () => {
    const job = await h.createJob({ name: 'counted' });
    await trigger(job.id);
    await finish(await trigger(job.id), 'succeeded');
    await h.env.pool.query(`INSERT INTO execution_minutes (minute, status, count, duration_ms) VALUES (date_trunc('minute', now()), 'succeeded', 7, 70), (date_trunc('minute', now()) - interval '5 minutes', 'dead', 2, 20)`);
    const page = (await b.request('GET', '/')).text;
    expect(page).toMatch(/<div class="card-value">1<\/div><div class="card-label">queued now<\/div>/);
    expect(page).toContain('Finished attempts per minute, last hour: 9 in total');
    expect(page).toContain('2 failed or dead');
    expect(page.match(/<g><title>/g)?.length).toBeGreaterThanOrEqual(60);
    expect(page).toContain('Queue depth per lane');
    expect(page).toContain('active workers');
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

  it('shows every problem beside its field and keeps what was typed', async () => {
    const res = await b.request('POST', '/jobs', {
      form: { _csrf: await b.csrf(), name: '', command: '  echo "kept"', cron_expr: '0 0 30 2 *', timezone: 'UTC', max_retries: 'many', payload: '{oops', lane: 'short', timeout_seconds: '900' },
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('problems to fix');
    expect(res.text).toMatch(/id="f-name"[^>]*aria-invalid="true"/);
    expect(res.text).toContain('never fires: day 30 does not occur in February');
    expect(res.text).toMatch(/id="f-max_retries-error">must be a number</);
    expect(res.text).toMatch(/id="f-payload-error">is not valid JSON/);
    expect(unescapeHtml(res.text)).toMatch(/<textarea id="f-command"[^>]*>\n {2}echo "kept"<\/textarea>/);
    expect(res.text).toMatch(/id="f-name-error">Enter a name.</);
    expect(res.text).toContain('value="0 0 30 2 *"');
    expect((await h.call('GET', '/api/v1/jobs')).body.data).toEqual([]);

    // The lane rule of the API: the short lane refuses a timeout over its limit.
    const lane = await b.request('POST', '/jobs', { form: { _csrf: await b.csrf(), name: 'x', command: 'true', lane: 'short', timeout_seconds: '900' } });
    expect(lane.status).toBe(400);
    expect(lane.text).toMatch(/id="f-lane-error">the short lane allows timeout_seconds up to 600/);
  });

  it('refuses a duplicate name with 409, and previews without creating', async () => {
    await h.createJob({ name: 'taken' });
    const dup = await b.request('POST', '/jobs', { form: { _csrf: await b.csrf(), name: 'taken', command: 'true' } });
    expect(dup.status).toBe(409);
    expect(dup.text).toContain('a live job already has this name');

    const preview = await b.request('POST', '/jobs', { form: { _csrf: await b.csrf(), intent: 'preview', name: 'later', command: 'true', cron_expr: '*/15 * * * *' } });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('every 15 minutes');
    expect((await h.call('GET', '/api/v1/jobs')).body.data).toHaveLength(1);
  });

  it('previews fire times with the scheduler\'s own cron code, DST included', async () => {
    const res = await b.request('GET', '/jobs/preview?cron_expr=30+2+*+*+*&timezone=America%2FNew_York', { headers: { 'X-Dashboard-Fragment': '1' } });
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
    const triggered = await b.request('POST', `/jobs/${job.id}/trigger`, { form: { _csrf: token, return_to: '/jobs' } });
    expect(triggered.status).toBe(303);
    expect(triggered.headers.get('location')).toBe('/jobs');
    const [execution] = (await h.call('GET', `/api/v1/jobs/${job.id}/executions`)).body.data;
    expect(execution).toMatchObject({ trigger: 'manual', status: 'queued' });
    expect((await b.request('GET', '/jobs')).text).toContain(`href="/executions/${execution.id}">Execution #${execution.id}</a>`);

    expect((await b.request('POST', `/jobs/${job.id}/pause`, { form: { _csrf: token } })).headers.get('location')).toBe(`/jobs/${job.id}`);
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).body).toMatchObject({ status: 'paused', next_run_at: null });
    expect((await b.request('GET', `/jobs/${job.id}`)).text).toContain('paused: no new runs start');
    await b.request('POST', `/jobs/${job.id}/resume`, { form: { _csrf: token } });
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).body).toMatchObject({ status: 'active', next_run_at: expect.any(String) });

    // Deleting takes a confirmation page (a link), then a POST.
    const confirm = await b.request('GET', `/jobs/${job.id}/delete`);
    expect(confirm.text).toContain(`action="/jobs/${job.id}/delete"`);
    const deleted = await b.request('POST', `/jobs/${job.id}/delete`, { form: { _csrf: token, return_to: `/jobs/${job.id}` } });
    expect(deleted.headers.get('location')).toBe('/jobs');
    expect((await h.call('GET', `/api/v1/jobs/${job.id}`)).status).toBe(404);
    expect((await h.call('GET', `/api/v1/executions/${execution.id}`)).body.status).toBe('cancelled');
    expect((await b.request('GET', '/jobs')).text).toContain(`Job #${job.id} deleted.`);
  });

  it('never redirects off-site after an action', async () => {
    const job = await h.createJob();
    for (const returnTo of ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)']) {
      const res = await b.request('POST', `/jobs/${job.id}/pause`, { form: { _csrf: await b.csrf(), return_to: returnTo } });
      expect(res.headers.get('location'), returnTo).toBe(`/jobs/${job.id}`);
    }
  });

  it('cancels a live execution, and says so when it had already finished', async () => {
    const job = await h.createJob();
    const id = await trigger(job.id);
    const token = await b.csrf();
    expect((await b.request('GET', `/executions/${id}`)).text).toContain(`action="/executions/${id}/cancel"`);
    await b.request('POST', `/executions/${id}/cancel`, { form: { _csrf: token } });
    expect((await h.call('GET', `/api/v1/executions/${id}`)).body.status).toBe('cancelled');
    expect((await b.request('GET', `/executions/${id}`)).text).toContain(`Execution #${id} cancelled.`);
    await b.request('POST', `/executions/${id}/cancel`, { form: { _csrf: token } });
    const again = (await b.request('GET', `/executions/${id}`)).text;
    expect(again).toContain(`Execution #${id} is already cancelled`);
    expect(again).not.toContain(`action="/executions/${id}/cancel"`);
  });

  it('replays one dead execution from its page, and many from the dead-letter page', async () => {
    const job = await h.createJob({ max_retries: 0 });
    const ids = [await trigger(job.id), await trigger(job.id), await trigger(job.id), await trigger(job.id)];
    for (const id of ids) await finish(id, 'dead', { error: 'exit code 1', output: `boom ${id}\n` });
    const alive = await trigger(job.id);
    const token = await b.csrf();

    const one = await b.request('POST', `/executions/${ids[0]}/replay`, { form: { _csrf: token } });
    const replayId = /^\/executions\/(\d+)$/.exec(one.headers.get('location')!)![1]!;
    expect((await h.call('GET', `/api/v1/executions/${replayId}`)).body).toMatchObject({ trigger: 'replay', retry_of: ids[0], attempt: 1 });
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
    for (const id of ids) expect(dead).toContain(`aria-label="Select execution ${id}"`);
    expect(dead).toContain(`boom ${ids[2]}`);
    const many = await b.request('POST', '/dead/replay', { form: { _csrf: token, ids: [ids[1]!, ids[2]!, alive, ids[1]!, 'junk'] } });
    expect(many.headers.get('location')).toBe('/dead');
    expect((await b.request('GET', '/dead')).text).toContain('Replayed 2 executions. 1 execution could not be replayed');
    const replays = (await h.call('GET', `/api/v1/jobs/${job.id}/executions?status=queued`)).body.data.filter((e: any) => e.trigger === 'replay');
    expect(replays.map((e: any) => e.retry_of).sort()).toEqual([ids[0], ids[1], ids[2]].sort());
    const deadAfter = (await b.request('GET', '/dead')).text;
    expect(deadAfter).toContain(`replayed as <a href="/executions/`);
    expect(deadAfter).toContain(`aria-label="Replay execution ${ids[3]}"`);
    expect(deadAfter).not.toContain(`aria-label="Replay execution ${ids[1]}"`);

    // One row's own button replays that row only, whatever is checked (the checked ones are replayed already).
    const only = await b.request('POST', '/dead/replay', { form: { _csrf: token, only: ids[3]!, ids: [ids[0]!, ids[1]!] } });
    expect(only.status).toBe(303);
    const after = (await h.call('GET', `/api/v1/jobs/${job.id}/executions`)).body.data.filter((e: any) => e.trigger === 'replay');
    expect(after.filter((e: any) => e.retry_of === ids[3])).toHaveLength(1);
    expect(after.filter((e: any) => e.retry_of === ids[0])).toHaveLength(1);
    // "Replay again" (force) from the execution's page starts a second chain.
    await b.request('POST', `/executions/${ids[0]}/replay`, { form: { _csrf: token, force: '1' } });
    const forced = (await h.call('GET', `/api/v1/jobs/${job.id}/executions`)).body.data.filter((e: any) => e.trigger === 'replay' && e.retry_of === ids[0]);
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
    const insert = async (fields: { retryOf: string; rootId: string | null; attempt: number; trigger: string; status: string }) =>
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
