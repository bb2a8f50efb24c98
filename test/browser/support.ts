/**
 * Browser test support: the whole stack (`functions/local.ts`) as a child process on the test's own schema and Redis
 * prefix, Debian's chromium through playwright-core, and a watcher that collects every failed request, every
 * response >= 400 and every console error of a browser context.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createTestEnv, type TestEnv } from '../support/env';
import { spawnEntry, type Child } from '../support/processes';
import { toolPresent } from '../support/tools';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = toolPresent('chromium', existsSync(CHROMIUM));
const SCREENSHOTS = fileURLToPath(new URL('../artifacts/screenshots/', import.meta.url));

export const VIEWPORTS = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

export interface Stack {
  env: TestEnv;
  child: Child;
  base: string;
  apiKey: string;
  /** The REST API with the key, for seeding data. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** `extraEnv`: more settings for the stack (e.g. a long LOOKAHEAD, so fire times wait materialised ahead). */
export async function startStack(extraEnv: Record<string, string> = {}): Promise<Stack> {
  const env = await createTestEnv('browser');
  const apiKey = `key-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const child = spawnEntry('functions/local.ts', {
    ...env.childEnv,
    API_KEYS: apiKey,
    HTTP_PORT: '0',
    SCHEDULE_INTERVAL: '1s',
    LOG_LEVEL: 'info',
    ...extraEnv,
  });
  let base: string;
  try {
    const line = await child.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 30_000);
    base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1]!;
  } catch (error) {
    child.kill('SIGKILL');
    await env.cleanup();
    throw error;
  }
  return {
    env,
    child,
    base,
    apiKey,
    async api(method, path, body) {
      const res = await fetch(`${base}/api/v1${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    async stop() {
      child.kill('SIGTERM');
      const exited = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r(null), 10_000))]);
      if (exited === null) child.kill('SIGKILL');
      await env.cleanup();
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Problems {
  list: string[];
  /** Responses with these statuses on URLs matching the pattern are part of the scenario, not problems. */
  expect(status: number, url: RegExp): void;
}

/**
 * Records what must not happen on any page of `context`. A live-region poll or a schedule preview that a navigation
 * or a newer keystroke aborts is not a problem (the script does that on purpose), nor is the execution page's
 * output stream (an EventSource, which every navigation away from the page ends).
 */
export function watch(context: BrowserContext): Problems {
  const list: string[] = [];
  const expected: { status: number; url: RegExp }[] = [];
  const isExpected = (status: number, url: string) => expected.some((e) => e.status === status && e.url.test(url));
  context.on('requestfailed', (request) => {
    const fromScript = request.headers()['x-dashboard-fragment'] !== undefined;
    const outputStream = /\/executions\/\d+\/output\?follow=true$/.test(request.url());
    if ((fromScript || outputStream) && request.failure()?.errorText === 'net::ERR_ABORTED') return;
    list.push(`request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
  });
  context.on('response', (response) => {
    const status = response.status();
    if (status < 400) return;
    if (isExpected(status, response.url())) return;
    list.push(`HTTP ${status}: ${response.request().method()} ${response.url()}`);
  });
  const onPage = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      // Chromium also logs every response >= 400 as a console error; the expected ones are not problems.
      const loaded = /^Failed to load resource: the server responded with a status of (\d+)/.exec(message.text());
      if (loaded && isExpected(Number(loaded[1]), message.location().url)) return;
      list.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => list.push(`page error on ${page.url()}: ${error.message}`));
  };
  context.pages().forEach(onPage);
  context.on('page', onPage);
  return { list, expect: (status, url) => void expected.push({ status, url }) };
}

/** A full-page screenshot into test/artifacts/screenshots/<name>-<viewport>.png. */
export async function screenshot(page: Page, name: string, viewport: keyof typeof VIEWPORTS): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}${name}-${viewport}.png`, fullPage: true });
}
