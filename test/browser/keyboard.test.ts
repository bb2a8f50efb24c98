/**
 * Keyboard paths through the dashboard in chromium, with Tab, Space and Enter only: sign in, create a job (refused,
 * then accepted), run now, pause and resume from the list and from a job's page, replay from the dead-letter page and
 * from an execution, cancel (with and without JavaScript). After each, focus must land where the user can carry on:
 * the notice saying what happened, the row acted on, or the list of problems. A refused form must come back at an
 * address whose reload is a GET. Screenshots of each landing go to test/artifacts/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually } from '../support/env';
import {
  HAS_CHROMIUM,
  VIEWPORTS,
  launchBrowser,
  screenshot,
  startStack,
  watch,
  type Problems,
  type Stack,
} from './support';

/** What has focus: tag, id, text, the form it posts, what describes it. */
async function focused(page: Page) {
  return page.evaluate(() => {
    const el = (globalThis as any).document.activeElement;
    return {
      tag: el.tagName.toLowerCase() as string,
      id: el.id as string,
      text: (el.textContent ?? '').trim() as string,
      action: (el.form?.getAttribute('action') ?? null) as string | null,
      describedBy: el.getAttribute('aria-describedby') as string | null,
    };
  });
}

/** Presses Enter on what has focus, and waits for the page it leads to (through any redirect) to load. */
async function enter(page: Page): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
}

/** Presses Tab until the focused element matches `selector` (and has exactly `text`, if given); returns the presses. */
async function tabTo(page: Page, selector: string, text?: string, max = 120): Promise<number> {
  for (let presses = 1; presses <= max; presses += 1) {
    await page.keyboard.press('Tab');
    const hit = await page.evaluate(
      ({ selector, text }) => {
        const el = (globalThis as any).document.activeElement;
        return el?.matches(selector) && (text === undefined || (el.textContent ?? '').trim() === text);
      },
      { selector, text },
    );
    if (hit) return presses;
  }
  throw new Error(`Tab never reached ${selector}${text ? ` "${text}"` : ''} on ${page.url()}`);
}

describe.skipIf(!HAS_CHROMIUM)('keyboard paths in chromium', () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startStack({ SHUTDOWN_GRACE: '1s' }), launchBrowser()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 30_000);

  /** A laptop-sized context signed in with the keyboard: the key field has focus when the page opens. */
  async function signIn(
    javaScriptEnabled = true,
  ): Promise<{ context: BrowserContext; page: Page; problems: Problems }> {
    const context = await browser.newContext({ viewport: VIEWPORTS.laptop, baseURL: stack.base, javaScriptEnabled });
    const problems = watch(context);
    const page = await context.newPage();
    await page.goto('/login');
    expect((await focused(page)).id).toBe('key');
    await page.keyboard.type(stack.apiKey);
    await enter(page);
    await page.waitForURL(`${stack.base}/`);
    return { context, page, problems };
  }

  const status = async (id: string) => (await stack.api('GET', `/executions/${id}`)).status as string;

  it('creates a job: a refused form focuses its problems and reloads as a GET, a created job focuses its notice', async () => {
    const { context, page, problems } = await signIn();
    await page.goto('/jobs/new');
    await tabTo(page, '#f-name');
    // After the name, what the job runs: the target's kind (a command by default), then the command itself.
    await page.keyboard.press('Tab');
    expect((await focused(page)).id).toBe('f-target');
    await page.keyboard.press('Tab');
    expect((await focused(page)).id).toBe('f-command');
    await page.keyboard.type('echo made by keyboard');
    await tabTo(page, 'button', 'Create job');
    await enter(page);
    await page.waitForURL(/\/jobs\/new\?draft=[\w-]+$/);
    expect((await focused(page)).id).toBe('error-summary');
    expect(await page.getByLabel('Command', { exact: true }).inputValue()).toBe('echo made by keyboard');
    await screenshot(page, 'fix-focus-form-errors', 'laptop');

    // Reloading asks for the same page again: a GET, never the POST.
    const methods: string[] = [];
    page.on(
      'request',
      (request) =>
        request.isNavigationRequest() && methods.push(`${request.method()} ${new URL(request.url()).pathname}`),
    );
    await page.reload();
    expect(methods).toEqual(['GET /jobs/new']);
    await page.getByRole('alert').getByText('Enter a name.').first().waitFor();
    expect((await stack.api('GET', '/jobs')).data).toEqual([]);

    // The first problem's link leads to its field; fix it and create.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.getAttribute('href'))).toBe('#f-name');
    await tabTo(page, '#f-name');
    await page.keyboard.type('keyboard job');
    await tabTo(page, 'button', 'Create job');
    await enter(page);
    await page.waitForURL(/\/jobs\/\d+$/);
    const landed = await focused(page);
    expect(landed.id).toBe('flash');
    expect(landed.text).toMatch(/^Job #\d+ created\.$/);
    await screenshot(page, 'fix-focus-after-create', 'laptop');
    await context.close();
    expect(problems.list).toEqual([]);
  }, 90_000);

  it('runs now, pauses and resumes: from the list focus returns to the row, from a job page to the notice', async () => {
    const first = await stack.api('POST', '/jobs', { name: 'list first', command: 'true' });
    const second = await stack.api('POST', '/jobs', { name: 'list second', command: 'true' });
    const { context, page, problems } = await signIn();
    await page.goto('/jobs');
    const inRow = (id: string, what: string) => `form[action="/jobs/${id}/${what}"] button`;

    await tabTo(page, inRow(first.id, 'trigger'));
    await enter(page);
    await page.getByRole('status').getByText('Queued a run now.').waitFor();
    let now = await focused(page);
    expect(now).toMatchObject({ action: `/jobs/${first.id}/trigger`, describedBy: 'flash', text: 'Run now' });
    await screenshot(page, 'fix-focus-after-run-now-list', 'laptop');
    // The place is kept: the next Tab is the same row's next control.
    await page.keyboard.press('Tab');
    expect((await focused(page)).action).toBe(`/jobs/${first.id}/pause`);

    await enter(page);
    await page.getByRole('status').getByText(`Job #${first.id} paused`, { exact: false }).waitFor();
    now = await focused(page);
    expect(now).toMatchObject({ action: `/jobs/${first.id}/resume`, describedBy: 'flash', text: 'Resume' });
    await screenshot(page, 'fix-focus-after-pause-list', 'laptop');
    await enter(page);
    await page.getByRole('status').getByText(`Job #${first.id} resumed`, { exact: false }).waitFor();
    expect((await focused(page)).action).toBe(`/jobs/${first.id}/pause`);

    await page.goto(`/jobs/${second.id}`);
    await tabTo(page, 'button', 'Run now');
    await enter(page);
    await page.waitForURL(new RegExp(`/jobs/${second.id}$`));
    now = await focused(page);
    expect(now.id).toBe('flash');
    expect(now.text).toMatch(/^Queued a run now\. Execution #\d+$/);
    await page.keyboard.press('Tab');
    expect((await focused(page)).text).toMatch(/^Execution #\d+$/);
    await screenshot(page, 'fix-focus-after-run-now-job', 'laptop');
    await page.goto(`/jobs/${second.id}`);
    await tabTo(page, 'button', 'Pause');
    await enter(page);
    await page.getByRole('status').getByText(`Job #${second.id} paused`, { exact: false }).waitFor();
    expect((await focused(page)).id).toBe('flash');
    await context.close();
    expect(problems.list).toEqual([]);
  }, 90_000);

  it('replays: "Replay selected" follows the ticked rows, and focus lands on the notice', async () => {
    const job = await stack.api('POST', '/jobs', { name: 'always fails', command: 'exit 1', max_retries: 0 });
    const runs = [
      await stack.api('POST', `/jobs/${job.id}/trigger`),
      await stack.api('POST', `/jobs/${job.id}/trigger`),
    ];
    for (const run of runs) await eventually(async () => (await status(run.id)) === 'dead', 20_000, 100);
    const { context, page, problems } = await signIn();

    await page.goto('/dead');
    const lastBox = await page.locator('input[name="ids"]').last().getAttribute('id');
    await tabTo(page, `#${lastBox}`);
    await page.keyboard.press('Space');
    expect(await page.locator(`#${lastBox}`).isChecked()).toBe(true);
    // From the last checkbox, the button is a few presses on (that row's links and button), with no row in between.
    const presses = await tabTo(page, 'button', 'Replay selected', 6);
    expect(presses).toBeLessThanOrEqual(4);
    await enter(page);
    await page.waitForURL(/\/dead$/);
    let now = await focused(page);
    expect(now.id).toBe('flash');
    expect(now.text).toMatch(/^Replayed as a new attempt chain\. Execution #\d+$/);
    await screenshot(page, 'fix-focus-after-replay-dead', 'laptop');

    const other = runs.find((r) => `pick-${r.id}` !== lastBox)!;
    await page.goto(`/executions/${other.id}`);
    await tabTo(page, 'button', 'Replay');
    await enter(page);
    await page.waitForURL((url) => /\/executions\/\d+$/.test(url.pathname) && !url.pathname.endsWith(`/${other.id}`));
    now = await focused(page);
    expect(now.id).toBe('flash');
    expect(now.text).toMatch(/^Replayed as a new attempt chain\. Execution #\d+$/);
    await screenshot(page, 'fix-focus-after-replay-execution', 'laptop');
    await context.close();
    expect(problems.list).toEqual([]);
  }, 90_000);

  for (const js of [true, false]) {
    it(`asks before cancelling a running command ${js ? 'with' : 'without'} JavaScript, and focus lands on the notice`, async () => {
      const job = await stack.api('POST', '/jobs', { name: `long ${js ? 'js' : 'no-js'}`, command: 'sleep 300' });
      const run = await stack.api('POST', `/jobs/${job.id}/trigger`);
      await eventually(async () => (await status(run.id)) === 'running', 20_000, 100);
      const { context, page, problems } = await signIn(js);

      await page.goto(`/executions/${run.id}`);
      await tabTo(page, 'a', 'Cancel execution…');
      await enter(page);
      await page.waitForURL(new RegExp(`/executions/${run.id}/cancel$`));
      await page
        .getByRole('heading', { name: `Cancel execution #${run.id} of “long ${js ? 'js' : 'no-js'}”?` })
        .waitFor();
      expect(await status(run.id), 'asking cancels nothing').toBe('running');
      await screenshot(page, `fix-cancel-confirm-${js ? 'js' : 'nojs'}`, 'laptop');

      // "Keep it running" goes back with nothing changed; confirming cancels.
      await tabTo(page, 'a', 'Keep it running');
      await enter(page);
      await page.waitForURL(new RegExp(`/executions/${run.id}$`));
      expect(await status(run.id)).toBe('running');
      await tabTo(page, 'a', 'Cancel execution…');
      await enter(page);
      await page.waitForURL(new RegExp(`/executions/${run.id}/cancel$`));
      await tabTo(page, 'button', 'Cancel execution');
      await enter(page);
      await page.waitForURL(new RegExp(`/executions/${run.id}$`));
      const now = await focused(page);
      expect(now.id).toBe('flash');
      expect(now.text).toBe(`Execution #${run.id} cancelled.`);
      expect(await status(run.id)).toBe('cancelled');
      await screenshot(page, `fix-focus-after-cancel-${js ? 'js' : 'nojs'}`, 'laptop');
      await context.close();
      expect(problems.list).toEqual([]);
    }, 90_000);
  }
});
