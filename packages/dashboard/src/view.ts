/** @module dashboard/view — what every dashboard handler receives: the request, the app's dependencies, the viewer. */
import type { CommandDeps } from '@jobs/core';
import type { Context } from 'hono';
import type { ApiDeps, Principal } from '@jobs/api';
import { roleAllows, type Role } from '@jobs/core';
import type { Flash } from './flash';
import type { Session, SessionKeys } from './session';

/** What a page needs to know about the request and the viewer. */
export interface View {
  /** Path of the page (navigation marks it current). */
  path: string;
  /** No API keys configured: no sign-in, and a banner says the dashboard is open. */
  open: boolean;
  signedIn: boolean;
  /** Who is signed in (the key's name and role); the open dashboard's principal is an admin. Null: nobody. */
  principal: Principal | null;
  /** The token every form of this page posts back as `_csrf`. */
  csrf: string;
  flash: Flash | null;
  /** Set by a page that puts focus on something of its own (the row acted on, a field) instead of the flash. */
  focusHeld?: boolean;
  now: Date;
  requestId: string;
}

export interface DashRequest {
  c: Context;
  deps: ApiDeps;
  commands: CommandDeps;
  view: View;
  /** The urlencoded body of an action (already read and size-checked); empty for GET. */
  form: URLSearchParams;
  /** The signed-in session (null: open dashboard, or the sign-in form). */
  session: Session | null;
  /** The configured keys (sign-in looks a key up here). */
  keys: SessionKeys;
}

export type DashHandler = (r: DashRequest) => Promise<Response> | Response;

/** A local path to return to after an action, or `fallback` (never another origin, never a protocol-relative URL). */
export function localPath(value: string | null | undefined, fallback: string): string {
  if (!value || value.length > 2000 || !value.startsWith('/') || value.startsWith('//') || /[\\\s]/.test(value))
    return fallback;
  return value;
}

/** True when the viewer may use what needs `role`: pages show a control only then (the gate refuses it anyway). */
export function can(view: View, role: Role): boolean {
  return view.principal !== null && roleAllows(view.principal.role, role);
}
