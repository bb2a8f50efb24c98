/**
 * Editing a job in the dashboard, in a real browser against the whole stack: the edit form is the create form
 * prefilled, refuses what create refuses, previews the new schedule, and saving shows the new schedule and a new
 * version in the job's history. Then a backfill previewed by a dry run, and created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { HAS_CHROMIUM, CHROMIUM, VIEWPORTS, launchBrowser, screenshot, startStack, watch, type Stack } from './support';

const title = HAS_CHROMIUM
  ? 'job editing in chromium'
  : `job editing in chromium (SKIPPED: ${CHROMIUM} is missing; apt-get install -y chromium)`;

describe.skipIf(!HAS_CHROMIUM)(title, () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 30_000);

  async function signIn(page: Page) {
    await page.goto('/');
    await page.getByLabel('API key').fill(stack.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.base}/`);
  }

  it('edits a job: prefilled form, same validation, schedule preview, new schedule and version on the job page', async () => {
    const job = await stack.api('POST', '/jobs', {
      name: 'edit-me',
      command: 'echo before',
      cron_expr: '*/5 * * * *',
      timezone: 'UTC',
    });
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, baseURL: stack.base });
    const problems = watch(context);
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`/jobs/${job.id}`);
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.waitForURL(`${stack.base}/jobs/${job.id}/edit`);
    await expect(page.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('edit-me');
    await expect(page.getByLabel('Cron expression', { exact: true }).inputValue()).resolves.toBe('*/5 * * * *');
    await expect(page.getByLabel('Command', { exact: true }).inputValue()).resolves.toBe('echo before');

    // Refused exactly as create refuses it, values kept.
    problems.expect(400, new RegExp(`/jobs/${job.id}/edit$`));
    await page.getByLabel('Cron expression', { exact: true }).fill('0 0 30 2 *');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByRole('alert')
      .getByText(/never fires/)
      .waitFor();
    await expect(page.getByLabel('Cron expression', { exact: true }).inputValue()).resolves.toBe('0 0 30 2 *');

    // The new schedule is previewed while typing.
    await page.getByLabel('Cron expression', { exact: true }).fill('15 3 * * *');
    await page.getByLabel('Time zone', { exact: true }).selectOption('Europe/Paris');
    await page.locator('#schedule-preview').getByText('Next fire times').waitFor();
    await expect(page.locator('#schedule-preview li').count()).resolves.toBe(5);
    await page.getByLabel('Command', { exact: true }).fill('echo after');
    await screenshot(page, 'job-edit', 'laptop');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(`${stack.base}/jobs/${job.id}`);
    await page.getByRole('status').getByText(`Job #${job.id} saved as version 2`).waitFor();

    const history = page.getByRole('table', { name: 'Versions of this job, newest first' });
    await expect(history.getByRole('row').nth(1).innerText()).resolves.toMatch(
      /v2[\s\S]*key1[\s\S]*cron_expr: \*\/5 \* \* \* \* → 15 3 \* \* \*/,
    );
    await expect(history.innerText()).resolves.toMatch(/timezone: UTC → Europe\/Paris/);
    await expect(history.innerText()).resolves.toMatch(/command: echo before → echo after/);
    await expect(page.getByText('15 3 * * *').first().isVisible()).resolves.toBe(true);
    const saved = await stack.api('GET', `/jobs/${job.id}`);
    expect(saved).toMatchObject({
      cron_expr: '15 3 * * *',
      timezone: 'Europe/Paris',
      command: 'echo after',
      version: 2,
    });

    // Saving the form unchanged keeps the version.
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').getByText(`Nothing changed: job #${job.id} keeps its version.`).waitFor();
    expect((await stack.api('GET', `/jobs/${job.id}`)).version).toBe(2);
    await screenshot(page, 'job-versions', 'laptop');
    expect(problems.list).toEqual([]);
    await context.close();
  }, 90_000);

  it('backfills past fire times after a dry-run preview', async () => {
    const job = await stack.api('POST', '/jobs', {
      name: 'backfill-me',
      handler: 'noop',
      cron_expr: '0 * * * *',
      status: 'paused',
    });
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, baseURL: stack.base });
    const problems = watch(context);
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`/jobs/${job.id}`);
    await page.getByRole('link', { name: 'Backfill…' }).click();
    await page.getByLabel('From (inclusive)').fill('2025-03-09T00:00:00Z');
    await page.getByLabel('To (exclusive)').fill('2025-03-09T03:00:00Z');
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    await page.locator('#backfill-preview').getByText('3 fire times in this range').waitFor();
    expect((await stack.api('GET', `/jobs/${job.id}/executions`)).data).toEqual([]);
    await page.getByRole('button', { name: 'Backfill', exact: true }).click();
    await page.waitForURL(`${stack.base}/jobs/${job.id}`);
    await page.getByRole('status').getByText('Backfill: 3 executions created for 3 fire times').waitFor();
    const executions = (await stack.api('GET', `/jobs/${job.id}/executions`)).data;
    expect(executions.map((e: { trigger: string }) => e.trigger)).toEqual(['backfill', 'backfill', 'backfill']);
    expect(problems.list).toEqual([]);
    await context.close();
  }, 90_000);
});
