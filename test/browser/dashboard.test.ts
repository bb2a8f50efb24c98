/**
 * The dashboard in a real browser (Debian's chromium through playwright-core) against the whole stack started as
 * `npm start` does, with API keys: sign in, create jobs through the form, watch a run succeed on a page that updates
 * itself, pause and resume, replay a dead execution from the dead-letter page, sign out. Every page is screenshotted
 * on a laptop and a phone viewport into test/artifacts/screenshots/. No page may make a request that fails, get a
 * response >= 400 that the scenario did not ask for, or log a console error (a CSP violation would be one).
 */
import { sharedDir } from '../support/procs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '../support/env';
import { HAS_CHROMIUM, CHROMIUM, VIEWPORTS, launchBrowser, screenshot, startStack, watch, type Stack } from './support';

if (!HAS_CHROMIUM) {
  console.warn(`SKIPPED browser tests: ${CHROMIUM} is missing (install it with: apt-get install -y chromium)`);
}

const title = HAS_CHROMIUM
  ? 'dashboard in chromium'
  : `dashboard in chromium (SKIPPED: ${CHROMIUM} is missing; apt-get install -y chromium)`;

describe.skipIf(!HAS_CHROMIUM)(title, () => {
  let stack: Stack;
  let browser: Browser;
  // Commands of a root worker run as nobody, which must be able to see the gate file the test creates in here.
  const scratch = sharedDir('dashboard-test');

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }, 30_000);

  async function signIn(page: Page) {
    await page.goto('/');
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('API key').fill(stack.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.base}/`);
  }

  async function createJobThroughForm(
    page: Page,
    fields: { name: string; command: string; cron?: string; retries?: string },
  ) {
    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByRole('link', { name: 'New job' }).click();
    await page.getByLabel('Name', { exact: true }).fill(fields.name);
    await page.getByLabel('Command', { exact: true }).fill(fields.command);
    if (fields.cron) await page.getByLabel('Cron expression', { exact: true }).fill(fields.cron);
    if (fields.retries !== undefined) await page.getByLabel('Retries', { exact: true }).fill(fields.retries);
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(/\/jobs\/\d+$/);
    await page
      .getByRole('status')
      .getByText(/Job #\d+ created/)
      .waitFor();
    return /\/jobs\/(\d+)$/.exec(page.url())![1]!;
  }

  it('signs in, creates and runs a job live, pauses and resumes it, replays a dead execution, signs out', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, baseURL: stack.base });
    const problems = watch(context);
    const page = await context.newPage();

    await signIn(page);
    const session = (await context.cookies()).find((c) => c.name === 'jobs_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false });
    expect(session!.value).not.toContain(stack.apiKey);

    // The schedule preview follows the typing (the script fetches it), before anything is submitted.
    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByRole('link', { name: 'New job' }).click();
    await page.getByLabel('Cron expression', { exact: true }).fill('30 2 * * *');
    await page.getByLabel('Time zone', { exact: true }).selectOption('America/New_York');
    await page.locator('#schedule-preview').getByText('at 02:30 every day').waitFor();
    await page.getByLabel('Cron expression', { exact: true }).fill('0 0 30 2 *');
    await page
      .locator('#schedule-preview')
      .getByText(/never fires/)
      .waitFor();

    // A job through the form. Its run waits for a file the test creates, so the page is seen before and after the
    // run finishes, and must show the success without being reloaded.
    const gate = join(scratch, 'go');
    const command = `until [ -e '${gate}' ]; do sleep 0.1; done; echo "hello from the dashboard"`;
    const jobId = await createJobThroughForm(page, { name: 'report "daily" <ok>', command, cron: '30 2 * * *' });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('report "daily" <ok>');
    expect(await page.locator('.schedule-words').first().textContent()).toBe('at 02:30 every day');
    expect(await page.getByLabel('Command', { exact: true }).textContent()).toBe(command);

    await page.getByRole('button', { name: 'Run now', exact: true }).click();
    await page.getByRole('status').getByText('Queued a run now.').waitFor();
    const live = page.locator('#live');
    await live.locator('.st-queued, .st-running').first().waitFor();
    await page.evaluate(() => ((globalThis as any).sameDocument = true));
    writeFileSync(gate, '');
    await live.locator('.st-succeeded').waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => (globalThis as any).sameDocument)).toBe(true);

    await live
      .getByRole('link', { name: /^#\d+$/ })
      .first()
      .click();
    await page.waitForURL(/\/executions\/\d+$/);
    expect(await page.getByLabel('Output', { exact: true }).textContent()).toBe('hello from the dashboard\n');
    await page.getByRole('link', { name: 'report "daily" <ok>' }).click();

    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByRole('status').getByText(`Job #${jobId} paused`, { exact: false }).waitFor();
    expect(await page.locator('.subtitle .badge').textContent()).toBe('paused');
    expect((await stack.api('GET', `/jobs/${jobId}`)).status).toBe('paused');
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByRole('status').getByText(`Job #${jobId} resumed`, { exact: false }).waitFor();
    expect(await page.locator('.subtitle .badge').textContent()).toBe('active');
    expect((await stack.api('GET', `/jobs/${jobId}`)).next_run_at).not.toBeNull();

    // A job that always fails, with no retries: its run goes straight to the dead letter queue.
    const failingId = await createJobThroughForm(page, { name: 'always fails', command: 'exit 1', retries: '0' });
    await page.getByRole('button', { name: 'Run now', exact: true }).click();
    await page.locator('#live .st-dead').waitFor({ timeout: 20_000 });
    const [dead] = (await stack.api('GET', `/executions?job_id=${failingId}&status=dead`)).data;

    await page.getByRole('link', { name: 'Dead letter' }).click();
    await page.getByRole('checkbox', { name: `Select execution ${dead.id}` }).check();
    await page.getByRole('button', { name: 'Replay selected' }).click();
    await page.getByRole('status').getByText('Replayed as a new attempt chain.').waitFor();
    const replays = (await stack.api('GET', `/executions?job_id=${failingId}`)).data.filter(
      (e: any) => e.trigger === 'replay',
    );
    expect(replays).toEqual([expect.objectContaining({ retry_of: dead.id, attempt: 1 })]);
    await page
      .getByRole('status')
      .getByRole('link', { name: `Execution #${replays[0].id}` })
      .click();
    await page
      .getByRole('listitem')
      .filter({ hasText: `replays #${dead.id}` })
      .waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login$/);
    await page.getByRole('status').getByText('Signed out.').waitFor();
    await page.goto('/jobs');
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/jobs');

    await context.close();
    expect(problems.list).toEqual([]);
  }, 120_000);

  it('renders every page on a laptop and a phone, with no failed request or console error', async () => {
    const ok = await stack.api('POST', '/jobs', {
      name: 'backup',
      cron_expr: '*/5 * * * *',
      command: 'echo backed up',
    });
    const paris = await stack.api('POST', '/jobs', {
      name: 'weekday digest',
      cron_expr: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      command: 'echo digest',
      status: 'paused',
    });
    const bad = await stack.api('POST', '/jobs', {
      name: 'flaky import',
      command: 'echo "connecting"; echo "timeout talking to upstream" >&2; exit 3',
      max_retries: 0,
    });
    const run = await stack.api('POST', `/jobs/${ok.id}/trigger`);
    const failed = await stack.api('POST', `/jobs/${bad.id}/trigger`);
    await eventually(async () => (await stack.api('GET', `/executions/${run.id}`)).status === 'succeeded', 20_000, 100);
    await eventually(async () => (await stack.api('GET', `/executions/${failed.id}`)).status === 'dead', 20_000, 100);

    for (const viewport of ['laptop', 'phone'] as const) {
      const context = await browser.newContext({ viewport: VIEWPORTS[viewport], baseURL: stack.base });
      const problems = watch(context);
      const page = await context.newPage();
      await page.goto('/login');
      await screenshot(page, 'login', viewport);
      await page.getByLabel('API key').fill(stack.apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${stack.base}/`);

      const pages: [name: string, path: string][] = [
        ['overview', '/'],
        ['jobs', '/jobs'],
        ['job', `/jobs/${paris.id}`],
        ['job-delete', `/jobs/${ok.id}/delete`],
        ['executions', '/executions'],
        ['execution', `/executions/${run.id}`],
        ['execution-dead', `/executions/${failed.id}`],
        ['dead', '/dead'],
        ['workers', '/workers'],
        ['lanes', '/lanes'],
      ];
      for (const [name, path] of pages) {
        await page.goto(path);
        await page.getByRole('main').waitFor();
        if (name !== 'job-delete') expect(await page.locator('h1').count(), path).toBe(1);
        await screenshot(page, name, viewport);
      }
      // Keyboard: the first Tab lands on the skip link, which then shows; the dead-letter "select all" works.
      await page.goto('/dead');
      await page.keyboard.press('Tab');
      const skip = page.getByRole('link', { name: 'Skip to content' });
      expect(await skip.evaluate((el) => el === (globalThis as any).document.activeElement)).toBe(true);
      expect((await skip.boundingBox())!.y).toBeGreaterThanOrEqual(0);
      await page.getByLabel('Select all on this page').check();
      const boxes = page.getByRole('checkbox', { name: /^Select execution / });
      expect(await boxes.count()).toBeGreaterThan(0);
      for (const box of await boxes.all()) expect(await box.isChecked()).toBe(true);

      await page.goto('/jobs/new');
      await page.getByLabel('Cron expression', { exact: true }).fill('0 9 * * 1-5');
      await page.getByLabel('Time zone', { exact: true }).selectOption('Europe/Paris');
      await page.locator('#schedule-preview').getByText('at 09:00 on weekdays').waitFor();
      await screenshot(page, 'job-new', viewport);

      // Submitting an impossible schedule comes back to the form (at its own address), values kept, problem named.
      await page.getByLabel('Name', { exact: true }).fill('  never  ');
      await page.getByLabel('Command', { exact: true }).fill('echo "never"');
      await page.getByLabel('Cron expression', { exact: true }).fill('0 0 30 2 *');
      await page.getByRole('button', { name: 'Create job' }).click();
      await page
        .getByRole('alert')
        .getByText(/never fires/)
        .first()
        .waitFor();
      expect(new URL(page.url()).pathname).toBe('/jobs/new');
      expect(await page.getByLabel('Command', { exact: true }).inputValue()).toBe('echo "never"');
      await screenshot(page, 'job-new-error', viewport);

      // The phone layout must not scroll sideways.
      if (viewport === 'phone') {
        for (const path of ['/', '/jobs', '/executions', '/dead', '/workers', `/executions/${failed.id}`]) {
          await page.goto(path);
          const overflow = await page.evaluate(() => {
            const g = globalThis as any;
            return g.document.documentElement.scrollWidth - g.innerWidth;
          });
          expect(overflow, path).toBeLessThanOrEqual(0);
        }
      }
      await context.close();
      expect(problems.list, viewport).toEqual([]);
    }
  }, 120_000);
});
