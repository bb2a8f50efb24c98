/**
 * Accessibility and layout of every dashboard page in chromium, at 1280 and 390 px, in the light and the dark theme:
 * axe-core finds no WCAG 2.1 AA violation (injected through the DevTools protocol, so the strict CSP stays on), the
 * focus ring keeps 3:1 against what is behind it on every control Tab reaches, times never break inside a date,
 * form fields line up, the dead-letter checkboxes have 44 px labels, and without JavaScript a live page says it is
 * a snapshot. Screenshots of each page and each of these fixes go to test/artifacts/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually } from '../support/env';
import { axeViolations, contrast, focusRing } from './a11y';
import { HAS_CHROMIUM, VIEWPORTS, launchBrowser, screenshot, startStack, watch, type Stack } from './support';

const THEMES = ['light', 'dark'] as const;
type Theme = (typeof THEMES)[number];
type Viewport = keyof typeof VIEWPORTS;

describe.skipIf(!HAS_CHROMIUM)('dashboard accessibility and layout in chromium', () => {
  let stack: Stack;
  let browser: Browser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // A long look-ahead keeps the next cron fire time queued ahead of time (the overview must not call it due).
    [stack, browser] = await Promise.all([startStack({ LOOKAHEAD: '10m', SHUTDOWN_GRACE: '1s' }), launchBrowser()]);
    const backup = await stack.api('POST', '/jobs', {
      name: 'backup',
      cron_expr: '*/5 * * * *',
      command: 'echo backed up',
    });
    const digest = await stack.api('POST', '/jobs', {
      name: 'weekday digest',
      cron_expr: '*/15 9-17 * * mon-fri',
      timezone: 'Europe/Paris',
      command: 'echo digest',
      // Its page then shows the flow limits panel.
      max_concurrency: 2,
      concurrency_key: '/team',
      max_concurrency_per_key: 1,
      rate_limit: { limit: 30, period_seconds: 60 },
    });
    const flaky = await stack.api('POST', '/jobs', {
      name: 'flaky import',
      command: 'echo "timeout talking to upstream" >&2; exit 3',
      max_retries: 0,
    });
    const slow = await stack.api('POST', '/jobs', { name: 'slow report', command: 'sleep 900', timeout_seconds: 1200 });
    const retrying = await stack.api('POST', '/jobs', {
      name: 'retries later',
      command: 'exit 1',
      max_retries: 2,
      backoff: { base_seconds: 600, factor: 2, max_seconds: 3600, jitter: 'none' },
    });
    Object.assign(ids, { backup: backup.id, digest: digest.id, flaky: flaky.id, slow: slow.id });
    const [ok, dead, running] = [
      await stack.api('POST', `/jobs/${backup.id}/trigger`),
      await stack.api('POST', `/jobs/${flaky.id}/trigger`),
      await stack.api('POST', `/jobs/${slow.id}/trigger`),
    ];
    await stack.api('POST', `/jobs/${retrying.id}/trigger`);
    Object.assign(ids, { ok: ok.id, dead: dead.id, running: running.id });
    const status = async (id: string) => (await stack.api('GET', `/executions/${id}`)).status;
    await eventually(async () => (await status(ok.id)) === 'succeeded', 20_000, 100);
    await eventually(async () => (await status(dead.id)) === 'dead', 20_000, 100);
    await eventually(async () => (await status(running.id)) === 'running', 20_000, 100);
    await eventually(
      async () => (await stack.api('GET', `/executions?job_id=${retrying.id}&status=retrying`)).data.length === 1,
      20_000,
      100,
    );
    await eventually(
      async () => (await stack.api('GET', `/executions?job_id=${backup.id}&status=queued`)).data.length > 0,
      20_000,
      100,
    );
  }, 90_000);

  afterAll(async () => {
    if (ids.running) await stack?.api('POST', `/executions/${ids.running}/cancel`).catch(() => undefined);
    await browser?.close();
    await stack?.stop();
  }, 30_000);

  async function signedIn(
    viewport: Viewport,
    theme: Theme,
    javaScriptEnabled = true,
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      viewport: VIEWPORTS[viewport],
      baseURL: stack.base,
      colorScheme: theme,
      javaScriptEnabled,
    });
    const page = await context.newPage();
    await page.goto('/login');
    await page.getByLabel('API key').fill(stack.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.base}/`);
    return { context, page };
  }

  const pages = (): [name: string, path: string][] => [
    ['overview', '/'],
    ['jobs', '/jobs'],
    ['job', `/jobs/${ids.digest}`],
    ['job-delete', `/jobs/${ids.backup}/delete`],
    ['job-new', '/jobs/new'],
    ['job-edit', `/jobs/${ids.digest}/edit`],
    ['job-backfill', `/jobs/${ids.backup}/backfill`],
    ['executions', '/executions'],
    ['execution', `/executions/${ids.ok}`],
    ['execution-running', `/executions/${ids.running}`],
    ['execution-cancel', `/executions/${ids.running}/cancel`],
    ['execution-dead', `/executions/${ids.dead}`],
    ['dead', '/dead'],
    ['workers', '/workers'],
    ['lanes', '/lanes'],
    ['not-found', '/jobs/999999'],
  ];

  it('has no WCAG 2.1 AA violation on any page, at both sizes, in both themes', async () => {
    const found: string[] = [];
    for (const viewport of ['laptop', 'phone'] as const) {
      for (const theme of THEMES) {
        const context = await browser.newContext({
          viewport: VIEWPORTS[viewport],
          baseURL: stack.base,
          colorScheme: theme,
        });
        const problems = watch(context);
        problems.expect(404, /\/jobs\/999999$/);
        const page = await context.newPage();
        await page.goto('/login');
        for (const v of await axeViolations(page))
          found.push(`login ${viewport} ${theme}: ${v.id} ${v.help}\n  ${v.nodes.join('\n  ')}`);
        await screenshot(page, `login-${theme}`, viewport);
        await page.getByLabel('API key').fill(stack.apiKey);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${stack.base}/`);

        const all = [...pages(), ['job-new-error', '/jobs/new'] as [string, string]];
        for (const [name, path] of all) {
          await page.goto(path);
          if (name === 'job-new-error') {
            await page.getByLabel('Cron expression', { exact: true }).fill('0 0 30 2 *');
            await page.getByRole('button', { name: 'Create job' }).click();
            await page.waitForURL(/\/jobs\/new\?draft=/);
          }
          await page.getByRole('main').waitFor();
          for (const v of await axeViolations(page))
            found.push(`${name} ${viewport} ${theme}: ${v.id} ${v.help}\n  ${v.nodes.join('\n  ')}`);
          await screenshot(page, `${name}-${theme}`, viewport);
        }
        await context.close();
        expect(problems.list, `${viewport} ${theme}`).toEqual([]);
      }
    }
    expect(found).toEqual([]);
  }, 240_000);

  it('draws a focus ring of 3:1 or more against what is behind it on every control, in both themes', async () => {
    const weak: string[] = [];
    let checked = 0;
    for (const theme of THEMES) {
      const { context, page } = await signedIn('laptop', theme);
      for (const path of ['/jobs', `/jobs/${ids.digest}`, '/jobs/new', '/dead', `/executions/${ids.running}/cancel`]) {
        await page.goto(path);
        const seen = new Set<string>();
        for (let i = 0; i < 60; i += 1) {
          await page.keyboard.press('Tab');
          const ring = await focusRing(page);
          if (ring.element.startsWith('body') || seen.has(ring.element)) break; // past the last control
          seen.add(ring.element);
          checked += 1;
          const ratio = ring.outline === 'none' ? 0 : contrast(ring.outline, ring.behind);
          if (ring.width < 2 || ratio < 3)
            weak.push(
              `${theme} ${path} ${ring.element}: ${ring.outline} ${ring.width}px on ${ring.behind} = ${ratio.toFixed(2)}:1`,
            );
        }
      }
      await page.goto('/jobs');
      await page.getByRole('button', { name: 'Run now' }).first().focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      await screenshot(page, `fix-focus-ring-${theme}`, 'laptop');
      await context.close();
    }
    expect(weak).toEqual([]);
    expect(checked, 'controls measured').toBeGreaterThan(60);
  }, 120_000);

  it('keeps times on one line at 390 px, lines up the form fields, and gives the dead-letter checkboxes 44 px labels', async () => {
    const { context, page } = await signedIn('phone', 'light');
    const broken: string[] = [];
    for (const path of [
      '/',
      '/jobs',
      `/jobs/${ids.digest}`,
      `/executions/${ids.ok}`,
      `/executions/${ids.running}`,
      `/executions/${ids.running}/cancel`,
      '/dead',
      '/workers',
      '/lanes',
    ]) {
      await page.goto(path);
      const split = await page.evaluate(() =>
        [...(globalThis as any).document.querySelectorAll('time, .nowrap')]
          .filter((el: any) => el.getClientRects().length > 1)
          .map((el: any) => el.textContent),
      );
      broken.push(...split.map((text: string) => `${path}: "${text}"`));
      const overflow = await page.evaluate(
        () => (globalThis as any).document.documentElement.scrollWidth - (globalThis as any).innerWidth,
      );
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    // The preview of a zoned schedule: each fire time stays whole, the UTC one too.
    await page.goto('/jobs/new');
    await page.getByLabel('Cron expression', { exact: true }).fill('*/15 9-17 * * mon-fri');
    await page.getByLabel('Time zone', { exact: true }).selectOption('Europe/Paris');
    await page.locator('#schedule-preview').getByText('every 15 minutes from 09:00 to 17:45 on weekdays').waitFor();
    const previewSplit = await page.evaluate(
      () =>
        [...(globalThis as any).document.querySelectorAll('#schedule-preview time, #schedule-preview .nowrap')].filter(
          (el: any) => el.getClientRects().length > 1,
        ).length,
    );
    expect(previewSplit).toBe(0);
    await screenshot(page, 'fix-times-and-cron-words', 'phone');
    expect(broken).toEqual([]);

    await page.goto('/dead');
    const label = page.locator('label.pick').first();
    const box = (await label.boundingBox())!;
    expect(box.height).toBeGreaterThanOrEqual(44);
    expect(box.width).toBeGreaterThanOrEqual(44);
    expect(await label.textContent()).toMatch(/^Select execution \d+$/);
    await label.click({ position: { x: box.width - 4, y: box.height / 2 } });
    expect(await label.locator('input').isChecked()).toBe(true);
    await screenshot(page, 'fix-dead-tap-targets', 'phone');
    await context.close();

    const laptop = await signedIn('laptop', 'light');
    await laptop.page.goto('/dead');
    const pick = (await laptop.page.locator('label.pick').first().boundingBox())!;
    expect(Math.min(pick.width, pick.height)).toBeGreaterThanOrEqual(44);
    const lastBox = (await laptop.page.locator('label.pick').last().boundingBox())!;
    const replay = (await laptop.page.getByRole('button', { name: 'Replay selected' }).boundingBox())!;
    expect(replay.y, '"Replay selected" comes after the rows').toBeGreaterThan(lastBox.y);
    await screenshot(laptop.page, 'fix-dead-order', 'laptop');

    await laptop.page.goto('/jobs/new');
    const top = async (id: string) => (await laptop.page.locator(`#${id}`).boundingBox())!.y;
    const left = async (selector: string) => (await laptop.page.locator(selector).boundingBox())!.x;
    const limits = await Promise.all(['f-max_retries', 'f-timeout_seconds', 'f-lane', 'f-priority'].map(top));
    for (const y of limits)
      expect(Math.abs(y - limits[0]!), 'Retries, Timeout, Lane and Priority line up').toBeLessThanOrEqual(1);
    const when = await Promise.all(['f-cron_expr', 'f-timezone', 'f-run_at'].map(top));
    for (const y of when)
      expect(Math.abs(y - when[0]!), 'Cron, Time zone and Run once at line up').toBeLessThanOrEqual(1);
    expect(await left('#f-run_at-hint')).toBe(await left('#f-run_at'));
    await screenshot(laptop.page, 'fix-form-alignment', 'laptop');
    await laptop.context.close();
  }, 120_000);

  it('says what the overview counts: queued ahead is not due, busy slots are as last reported', async () => {
    for (const theme of THEMES) {
      const { context, page } = await signedIn('laptop', theme);
      const card = (label: string | RegExp) =>
        page.locator('.card').filter({ has: page.locator('.card-label', { hasText: label }) });
      await card(/^queued now, \d+ of them not due yet$/).waitFor();
      expect(await card('due and waiting for a worker').locator('.card-value').textContent()).toBe('0');
      expect(await card('longest wait of those').locator('.card-value').textContent()).toBe('—');
      await card(/slots? busy at their last heartbeat$/).waitFor();
      expect(await card('waiting to retry now').locator('.card-value').textContent()).toBe('1');
      await screenshot(page, `fix-overview-counts-${theme}`, 'laptop');

      await page.goto(`/executions/${ids.running}`);
      await page.getByText(/^running for \d/).waitFor();
      await page.getByText('timeout 20 min').waitFor();
      await screenshot(page, `fix-running-elapsed-${theme}`, 'laptop');
      await context.close();
    }
  }, 60_000);

  it('without JavaScript, says a live page is a snapshot; with it, the page updates and says nothing of the kind', async () => {
    const off = await signedIn('phone', 'light', false);
    await off.page.goto(`/executions/${ids.running}`);
    const sign = off.page.getByRole('note').filter({ hasText: 'Without JavaScript this page does not update itself' });
    expect(await sign.isVisible()).toBe(true);
    await sign.getByRole('link', { name: 'reload it' }).click();
    await off.page.waitForURL(new RegExp(`/executions/${ids.running}$`));
    await screenshot(off.page, 'fix-stale-sign-nojs', 'phone');
    await off.context.close();

    const on = await signedIn('phone', 'dark');
    await on.page.goto(`/executions/${ids.running}`);
    await on.page.getByText(/Live: updates every/).waitFor();
    expect(await on.page.getByText('Without JavaScript this page does not update itself').isVisible()).toBe(false);
    await on.context.close();
  }, 60_000);
});
