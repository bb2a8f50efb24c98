/**
 * Roles in a real browser (Debian's chromium through playwright-core) against the whole stack with named keys: a
 * `read` key sees the pages but no create, edit, trigger or delete control (and the create form is refused); an
 * `operate` key can run a job now but sees no create, edit or delete control (and is refused the create form).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { HAS_CHROMIUM, CHROMIUM, VIEWPORTS, launchBrowser, screenshot, startStack, watch, type Stack } from './support';

const KEYS = {
  read: `rd-${randomBytes(12).toString('hex')}`,
  operate: `op-${randomBytes(12).toString('hex')}`,
  admin: `ad-${randomBytes(12).toString('hex')}`,
};

const title = HAS_CHROMIUM
  ? 'roles in chromium'
  : `roles in chromium (SKIPPED: ${CHROMIUM} is missing; apt-get install -y chromium)`;

describe.skipIf(!HAS_CHROMIUM)(title, () => {
  let stack: Stack;
  let browser: Browser;
  let jobId: string;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([
      startStack({ API_KEYS: `support:read:${KEYS.read},ci:operate:${KEYS.operate},platform:admin:${KEYS.admin}` }),
      launchBrowser(),
    ]);
    const res = await fetch(`${stack.base}/api/v1/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEYS.admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'nightly-billing', command: 'true', cron_expr: '0 3 * * *' }),
    });
    expect(res.status).toBe(201);
    jobId = ((await res.json()) as { id: string }).id;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 30_000);

  async function signIn(page: Page, key: string) {
    await page.goto('/login');
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.base}/`);
  }

  /** Which controls the jobs list and the job's page offer. */
  async function controls(page: Page) {
    await page.goto('/jobs');
    const onList = {
      create: await page.getByRole('link', { name: 'New job' }).count(),
      run: await page.getByRole('button', { name: 'Run now' }).count(),
    };
    await page.goto(`/jobs/${jobId}`);
    return {
      create: onList.create,
      runOnList: onList.run,
      run: await page.getByRole('button', { name: 'Run now' }).count(),
      pause: await page.getByRole('button', { name: 'Pause', exact: true }).count(),
      delete: await page.getByRole('link', { name: /Delete/ }).count(),
      edit: await page.getByRole('link', { name: /Edit/ }).count(),
      audit: await page.getByRole('link', { name: 'Audit', exact: true }).count(),
    };
  }

  it('a read key sees no create, edit or trigger controls, and is refused the create form', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, baseURL: stack.base });
    const problems = watch(context);
    problems.expect(403, /\/jobs\/new$/);
    const page = await context.newPage();
    await signIn(page, KEYS.read);
    expect(await page.getByText('support (read)').count()).toBe(1);
    expect(await controls(page)).toEqual({ create: 0, runOnList: 0, run: 0, pause: 0, delete: 0, edit: 0, audit: 0 });
    await screenshot(page, 'roles-read-job', 'laptop');
    // The page is hidden and refused: typing the address gets the 403 page naming the role.
    const refused = await page.goto('/jobs/new');
    expect(refused?.status()).toBe(403);
    expect(await page.getByText('This needs the admin role').count()).toBe(1);
    expect(problems.list).toEqual([]);
    await context.close();
  });

  it('an operate key can run a job now, but sees no create or edit controls', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, baseURL: stack.base });
    const problems = watch(context);
    problems.expect(403, /\/jobs\/new$/);
    const page = await context.newPage();
    await signIn(page, KEYS.operate);
    expect(await controls(page)).toEqual({ create: 0, runOnList: 1, run: 1, pause: 1, delete: 0, edit: 0, audit: 0 });
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('status').getByText('Queued a run now.').waitFor();
    await screenshot(page, 'roles-operate-job', 'laptop');
    expect((await page.goto('/jobs/new'))?.status()).toBe(403);
    expect(problems.list).toEqual([]);
    await context.close();

    // The run is in the audit trail under the key's name.
    const audit = await fetch(`${stack.base}/api/v1/audit?action=job.trigger`, {
      headers: { Authorization: `Bearer ${KEYS.admin}` },
    });
    const rows = ((await audit.json()) as { data: { key: string; target: string }[] }).data;
    expect(rows).toMatchObject([{ key: 'ci', target: `job:${jobId}` }]);
  });
});
