/** @module dashboard/render — pages, live fragments and error pages as HTML responses. */
import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { formatUtc } from './format';
import { Layout, LiveRegion } from './ui/layout';
import type { DashRequest, View } from './view';

/** Requests from the dashboard script for the live region or a preview carry this header. */
const FRAGMENT_HEADER = 'X-Dashboard-Fragment';

export const isFragment = (c: Context) => c.req.header(FRAGMENT_HEADER) !== undefined;

/** Renders JSX to a string (hono/jsx escapes every text and attribute value). */
async function toHtml(node: Child): Promise<string> {
  return String(await (node as { toString(): string | Promise<string> }).toString());
}

export async function renderPage(
  c: Context,
  view: View,
  page: { title: string; body: Child; status?: ContentfulStatusCode; bare?: boolean },
): Promise<Response> {
  const html = await toHtml(
    <Layout view={view} title={page.title} bare={page.bare}>
      {page.body}
    </Layout>,
  );
  return htmlResponse(c, `<!DOCTYPE html>${html}`, page.status ?? 200);
}

const utf8 = new TextEncoder();

/** As c.html, with the body as bytes: a Response made from a string first checks each of its characters for lone surrogates. */
function htmlResponse(c: Context, html: string, status: ContentfulStatusCode): Response {
  return c.body(utf8.encode(html), status, { 'Content-Type': 'text/html; charset=UTF-8' });
}

/** A fragment: the markup alone, for the script to put into the page. */
export async function renderFragment(c: Context, node: Child, status: ContentfulStatusCode = 200): Promise<Response> {
  return htmlResponse(c, await toHtml(<>{node}</>), status);
}

/**
 * A page with a live region: the full page normally, only the region's content when the script asks for it.
 * `final` marks the content as settled, which stops the refresh.
 */
export async function renderLive(
  r: DashRequest,
  page: { title: string; before?: Child; live: Child; after?: Child; label: string; final?: boolean; everyMs?: number },
): Promise<Response> {
  const content = (
    <>
      {page.final && <span data-live-final hidden></span>}
      {page.live}
    </>
  );
  if (isFragment(r.c)) return renderFragment(r.c, content);
  const url = new URL(r.c.req.url);
  return renderPage(r.c, r.view, {
    title: page.title,
    body: (
      <>
        {page.before}
        {!page.final && <StaleSign now={r.view.now} href={url.pathname + url.search} />}
        <LiveRegion label={page.label} everyMs={page.everyMs}>
          {content}
        </LiveRegion>
        {page.after}
      </>
    ),
  });
}

/** Without JavaScript nothing refreshes the live region: say when it was true, and how to get the current state. */
const StaleSign = ({ now, href }: { now: Date; href: string }) => (
  <noscript>
    <p class="stale" role="note">
      Shown as of <time datetime={now.toISOString()}>{formatUtc(now)}</time>. Without JavaScript this page does not
      update itself: <a href={href}>reload it</a> for the current state.
    </p>
  </noscript>
);

const TITLES: Partial<Record<number, string>> = {
  400: 'Bad request',
  401: 'Sign in required',
  403: 'Request refused',
  404: 'Not found',
  409: 'Conflict',
  413: 'Request too large',
  429: 'Too many attempts',
  500: 'Something went wrong',
};

/** An error as a page (or as a bare message for fragment requests). Messages are ours, never raw request data. */
export async function renderError(
  c: Context,
  view: View,
  status: ContentfulStatusCode,
  message: string,
  link?: { href: string; label: string },
) {
  const title = TITLES[status] ?? 'Error';
  const body = (
    <div class="panel confirm">
      <h1>{title}</h1>
      <p>{message}</p>
      <p>
        <a href={link?.href ?? '/'}>{link?.label ?? 'Back to the overview'}</a>
      </p>
    </div>
  );
  if (isFragment(c)) return renderFragment(c, <p class="field-error">{message}</p>, status);
  return renderPage(c, view, { title, body, status, bare: status === 401 || status === 429 });
}
