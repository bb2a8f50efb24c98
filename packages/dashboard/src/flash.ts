/**
 * @module dashboard/flash — one-shot notices after an action (POST, then redirect, then GET shows the notice).
 * The cookie carries a code and ids only; every message is written here, so nothing a request sent is reflected.
 */
import { EXECUTION_STATUSES, LANES } from '@jobs/core';
import type { Context } from 'hono';
import { clearCookie, readCookie, writeCookie } from './cookies';

export interface Flash {
  tone: 'ok' | 'error';
  text: string;
  link?: { href: string; label: string };
  /** A message that belongs beside a form field (the sign-in key) rather than above the page. */
  field?: 'key';
  /** The job row and the control in it that a list gives focus back to (the flash describes it). */
  target?: { job: string; control: 'trigger' | 'toggle' };
}

type Args = string[];
const id = (s: string | undefined) => (s && /^[0-9]{1,19}$/.test(s) ? s : null);
const status = (s: string | undefined) =>
  (EXECUTION_STATUSES as readonly string[]).includes(s ?? '') ? s! : 'finished';
const lane = (s: string | undefined) => (LANES as readonly string[]).includes(s ?? '');
const count = (s: string | undefined) => (s && /^[0-9]{1,6}$/.test(s) ? Number(s) : 0);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const MESSAGES = {
  created: ([j]) => (id(j) ? { tone: 'ok', text: `Job #${j} created.` } : null),
  edited: ([j, v]) =>
    id(j) && id(v)
      ? { tone: 'ok', text: `Job #${j} saved as version ${v}: attempts that start from now on use it.` }
      : null,
  'edit-unchanged': ([j]) => (id(j) ? { tone: 'ok', text: `Nothing changed: job #${j} keeps its version.` } : null),
  backfilled: ([j, n, total]) =>
    id(j)
      ? {
          tone: 'ok',
          text: `Backfill: ${plural(count(n), 'execution')} created for ${plural(count(total), 'fire time')} (those that had one already were skipped).`,
          link: { href: `/executions?job_id=${j}`, label: 'Its executions' },
        }
      : null,
  triggered: ([e, j]) =>
    id(e)
      ? {
          tone: 'ok',
          text: `Queued a run now.`,
          link: { href: `/executions/${e}`, label: `Execution #${e}` },
          ...(id(j) ? { target: { job: j!, control: 'trigger' } } : {}),
        }
      : null,
  paused: ([j]) =>
    id(j)
      ? {
          tone: 'ok',
          text: `Job #${j} paused: no new runs start until it is resumed.`,
          target: { job: j!, control: 'toggle' },
        }
      : null,
  resumed: ([j]) =>
    id(j)
      ? {
          tone: 'ok',
          text: `Job #${j} resumed: the next run is computed from now.`,
          target: { job: j!, control: 'toggle' },
        }
      : null,
  deleted: ([j]) =>
    id(j)
      ? {
          tone: 'ok',
          text: `Job #${j} deleted. Its history stays readable.`,
          link: { href: `/executions?job_id=${j}`, label: 'Its executions' },
        }
      : null,
  cancelled: ([e]) => (id(e) ? { tone: 'ok', text: `Execution #${e} cancelled.` } : null),
  'cancel-late': ([e, s]) =>
    id(e)
      ? {
          tone: 'error',
          text: `Execution #${e} is already ${status(s)}; only queued, retrying or running ones can be cancelled.`,
        }
      : null,
  replayed: ([e]) =>
    id(e)
      ? {
          tone: 'ok',
          text: 'Replayed as a new attempt chain.',
          link: { href: `/executions/${e}`, label: `Execution #${e}` },
        }
      : null,
  'replay-refused': ([e, s]) =>
    id(e)
      ? { tone: 'error', text: `Execution #${e} is ${status(s)}; only dead or failed executions can be replayed.` }
      : null,
  'replay-already': ([e, replay]) =>
    id(e) && id(replay)
      ? {
          tone: 'error',
          text: `Execution #${e} was replayed already; use "Replay again" on its page to start another chain.`,
          link: { href: `/executions/${replay}`, label: `Execution #${replay}` },
        }
      : null,
  'replay-deleted': ([e]) =>
    id(e) ? { tone: 'error', text: `Execution #${e} belongs to a deleted job and cannot be replayed.` } : null,
  'replayed-many': ([done, refused]) => {
    const n = count(done);
    const r = count(refused);
    const text = `Replayed ${plural(n, 'execution')}.${r > 0 ? ` ${plural(r, 'execution')} could not be replayed (replayed already, no longer dead, or the job was deleted).` : ''}`;
    return { tone: r > 0 && n === 0 ? 'error' : 'ok', text };
  },
  'replay-none': () => ({ tone: 'error', text: 'Select at least one execution to replay.' }),
  'lane-paused': ([l]) =>
    lane(l) ? { tone: 'ok', text: `Lane ${l} paused: nothing new starts on it; triggers queue up.` } : null,
  'lane-resumed': ([l]) =>
    lane(l) ? { tone: 'ok', text: `Lane ${l} resumed: what waits starts now, in order.` } : null,
  'signed-out': () => ({ tone: 'ok', text: 'Signed out.' }),
  'login-empty': () => ({ tone: 'error', text: 'Enter an API key.', field: 'key' }),
  'login-failed': () => ({ tone: 'error', text: 'That key is not one of the configured API keys.', field: 'key' }),
} satisfies Record<string, (a: Args) => Flash | null>;

export type FlashCode = keyof typeof MESSAGES;

/** Stores a notice for the next page. @example setFlash(c, 'triggered', execution.id) */
export function setFlash(c: Context, code: FlashCode, ...args: (string | number)[]): void {
  writeCookie(c, 'flash', [code, ...args].join(':'));
}

/** The pending notice, if any, cleared so that it shows once. */
export function takeFlash(c: Context): Flash | null {
  const value = readCookie(c, 'flash');
  if (value === undefined) return null;
  clearCookie(c, 'flash');
  if (!/^[a-z-]{1,40}(:[A-Za-z0-9_-]{1,40}){0,3}$/.test(value)) return null;
  const [code, ...args] = value.split(':');
  const message = (MESSAGES as Record<string, (a: Args) => Flash | null>)[code!];
  return message ? message(args) : null;
}
