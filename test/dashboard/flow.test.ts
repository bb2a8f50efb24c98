/** Dashboard flow control: limit fields in the job form, the job's limits panel, the lanes page and its actions. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formClient, type FormClient } from '../browser/form-client';
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

async function submit(form: Record<string, string>) {
  const post = await b.request('POST', '/jobs', { form: { _csrf: await b.csrf(), ...form } });
  const location = post.headers.get('location') ?? '';
  return { post, location, page: location.startsWith('/jobs/new') ? await b.request('GET', location) : null };
}

describe('flow control in the dashboard', () => {
  it('creates a job with limits from the form, as the API would', async () => {
    const { post, location } = await submit({
      name: 'limited',
      command: 'true',
      max_concurrency: '4',
      concurrency_key: '/tenant',
      max_concurrency_per_key: '1',
      rate_limit_limit: '10',
      rate_limit_period_seconds: '60',
      rate_limit_per_key: 'on',
    });
    expect(post.status).toBe(303);
    const id = /^\/jobs\/(\d+)$/.exec(location)![1]!;
    const job = (await h.call('GET', `/api/v1/jobs/${id}`)).body;
    expect(job).toMatchObject({
      max_concurrency: 4,
      concurrency_key: '/tenant',
      max_concurrency_per_key: 1,
      rate_limit: { limit: 10, period_seconds: 60, per_key: true },
    });
    const page = (await b.request('GET', location)).text;
    expect(page).toContain('Flow limits');
    expect(page).toContain('at most 4');
    expect(page).toContain('at most 10 starts per 1 min per key value');
    // No limits: no panel, and the form's section stays closed.
    const plain = await submit({ name: 'plain', command: 'true' });
    expect((await b.request('GET', plain.location)).text).not.toContain('Flow limits');
  });

  it('shows limit problems beside their fields, with the section open', async () => {
    const { page } = await submit({
      name: 'bad',
      command: 'true',
      max_concurrency: '0',
      max_concurrency_per_key: '2',
      rate_limit_limit: '5',
    });
    const html = page!.text;
    expect(html).toMatch(/<details class="advanced" open="">\s*<summary>Flow limits/);
    expect(html).toContain('Max concurrency: Too small');
    expect(html).toContain('Max per key: needs concurrency_key');
    expect(html).toMatch(/Rate period: is required|Rate limit: .*period_seconds/);
    expect(html).toContain('value="2"');
  });

  it('shows how many attempts of a limited job hold a slot and wait, on its page and on the lanes page', async () => {
    const job = await h.createJob({ handler: 'noop', command: null, max_concurrency: 1 });
    for (let i = 0; i < 3; i++) await h.call('POST', `/api/v1/jobs/${job.id}/trigger`);
    await h.env.queue.claim({ lane: 'short', count: 10, leaseMs: 60_000 });
    const page = (await b.request('GET', `/jobs/${job.id}`)).text;
    expect(page).toMatch(/Holding a slot<\/dt>\s*<dd>1<\/dd>/);
    expect(page).toMatch(/Waiting for a slot<\/dt>\s*<dd>2<span class="muted"> \(2 for the job limit/);
    const lanes = (await b.request('GET', '/lanes')).text;
    expect(lanes).toContain(`<a href="/jobs/${job.id}">${job.name}</a>`);
  });

  it('pauses and resumes a lane from the lanes page, with a notice', async () => {
    const token = await b.csrf();
    expect((await b.request('GET', '/lanes')).text).toContain('Pause short');
    const paused = await b.request('POST', '/lanes/short/pause', { form: { _csrf: token } });
    expect(paused.status).toBe(303);
    expect(paused.headers.get('location')).toBe('/lanes');
    const after = (await b.request('GET', '/lanes')).text;
    expect(after).toContain('Lane short paused');
    expect(after).toContain('Resume short');
    expect((await h.call('GET', '/api/v1/lanes')).body.data[0]).toMatchObject({ lane: 'short', paused: true });
    await b.request('POST', '/lanes/short/resume', { form: { _csrf: token } });
    expect((await b.request('GET', '/lanes')).text).toContain('Lane short resumed');
    expect((await h.call('GET', '/api/v1/lanes')).body.data[0]).toMatchObject({ lane: 'short', paused: false });
    expect((await b.request('POST', '/lanes/medium/pause', { form: { _csrf: token } })).status).toBe(404);
  });
});
