/** @module dashboard/ui/layout — the page shell: landmarks, navigation, the open-dashboard banner, notices. */
import type { Child, FC, PropsWithChildren } from 'hono/jsx';
import { ASSET_URLS } from '../assets';
import type { Role } from '@jobs/core';
import { can, type View } from '../view';
import { CsrfField } from './components';

const NAV: [href: string, label: string, role: Role][] = [
  ['/', 'Overview', 'read'],
  ['/jobs', 'Jobs', 'read'],
  ['/executions', 'Executions', 'read'],
  ['/dead', 'Dead letter', 'read'],
  ['/workers', 'Workers', 'read'],
  ['/lanes', 'Lanes', 'read'],
  ['/audit', 'Audit', 'admin'],
];

const current = (path: string, href: string) =>
  href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`);

/** `bare`: no navigation (sign-in and refusals, where every link would lead back to sign-in). */
export const Layout: FC<PropsWithChildren<{ view: View; title: string; bare?: boolean }>> = ({
  view,
  title,
  bare,
  children,
}) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="color-scheme" content="light dark" />
      <meta name="referrer" content="same-origin" />
      <title>{`${title} · Jobs scheduler`}</title>
      <link rel="icon" href="data:," />
      <link rel="stylesheet" href={ASSET_URLS.css} />
      <script src={ASSET_URLS.js} defer></script>
    </head>
    <body>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="top-inner">
          <a class="brand" href="/">
            Jobs scheduler
          </a>
          {!bare && (
            <nav aria-label="Main">
              <ul>
                {NAV.filter(([, , role]) => can(view, role)).map(([href, label]) => (
                  <li>
                    <a href={href} aria-current={current(view.path, href) ? 'page' : undefined}>
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {view.signedIn && !bare && (
            <form method="post" action="/logout" class="signout">
              <CsrfField view={view} />
              {view.principal && <span class="muted who">{`${view.principal.name} (${view.principal.role})`}</span>}
              <button type="submit" class="btn btn-quiet">
                Sign out
              </button>
            </form>
          )}
        </div>
      </header>
      {view.open && (
        <div class="banner" role="note">
          <strong>Open dashboard.</strong> No API keys are configured, so this dashboard and the API accept anyone who
          can reach them. Set <code>API_KEYS</code> for anything but local development.
        </div>
      )}
      <main id="main" tabindex={-1}>
        {view.flash && (
          // Focus lands here after an action (no JS needed), unless the page returns it to the row acted on.
          <div
            id="flash"
            class={`flash flash-${view.flash.tone}`}
            role={view.flash.tone === 'error' ? 'alert' : 'status'}
            tabindex={-1}
            autofocus={!view.focusHeld || undefined}
          >
            {view.flash.text}
            {view.flash.link && (
              <>
                {' '}
                <a href={view.flash.link.href}>{view.flash.link.label}</a>
              </>
            )}
          </div>
        )}
        {children}
      </main>
      <footer class="bottom">
        <p>
          Request <code>{view.requestId}</code> · rendered{' '}
          <span class="nowrap">{view.now.toISOString().replace('T', ' ').slice(0, 19)} UTC</span>
        </p>
      </footer>
    </body>
  </html>
);

/** A page heading with optional actions beside it (wrapping below it on a phone). */
export const PageHeader: FC<{ title: Child; subtitle?: Child; actions?: Child }> = ({ title, subtitle, actions }) => (
  <div class="page-header">
    <div>
      <h1>{title}</h1>
      {subtitle && <p class="subtitle">{subtitle}</p>}
    </div>
    {actions && <div class="actions">{actions}</div>}
  </div>
);

/**
 * A region the script refreshes in place every few seconds (the server answers requests carrying the
 * X-Dashboard-Fragment header with the region's content only). `final` stops the refresh (e.g. a finished execution).
 */
export const LiveRegion: FC<PropsWithChildren<{ label: string; everyMs?: number }>> = ({
  label,
  everyMs = 3000,
  children,
}) => (
  <section class="live" id="live" data-live={String(everyMs)} aria-label={label}>
    {children}
  </section>
);
