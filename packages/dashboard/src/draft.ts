/**
 * @module dashboard/draft — a refused (or previewed) job form carried across Post/Redirect/Get: POST /jobs answers
 * 303 to `/jobs/new?draft=<id>`, and that page shows the values and problems again, so a reload repeats a GET, never
 * the POST. There is no server-side state (a Lambda container may serve the next request), so the draft travels in a
 * cookie: deflated, signed with a secret derived from the first API key, scoped to /jobs/new, kept an hour. A draft
 * too large for a cookie (MAX_DRAFT_CHARS) returns null, and the caller answers the POST in place instead.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { JOB_FIELDS, JOB_FORM_DEFAULTS, type FieldErrors, type JobFormValues } from './job-input';
import type { SessionKeys } from './session';

/** Browsers keep cookies up to 4096 bytes, name and attributes included. */
const MAX_DRAFT_CHARS = 3800;
const VERSION = 'd1';
const LABEL = 'jobs-dashboard/draft/v1';
const ID = /^[A-Za-z0-9_-]{16}$/;
/** A compressed draft is at most MAX_DRAFT_CHARS; inflating more than this is refused (no zip bombs). */
const MAX_INFLATED_BYTES = 256 * 1024;

export interface Draft {
  id: string;
  values: JobFormValues;
  errors: FieldErrors;
  /** The "Preview schedule" button made it, not a refusal. */
  preview: boolean;
}

export const newDraftId = () => randomBytes(12).toString('base64url');
const isDraftId = (value: string | undefined): value is string => value !== undefined && ID.test(value);

// With no API keys (an open dashboard) there is no secret: the MAC then only catches a garbled cookie.
const secretOf = (keys: SessionKeys) =>
  createHmac('sha256', keys.secrets[0] ?? Buffer.alloc(32))
    .update(LABEL)
    .digest();
const mac = (keys: SessionKeys, text: string) => createHmac('sha256', secretOf(keys)).update(text).digest();

/** The cookie value for a draft, or null when it would not fit in a cookie. Only non-default values are kept. */
export function sealDraft(keys: SessionKeys, draft: Draft): string | null {
  const values = Object.fromEntries(
    JOB_FIELDS.filter((f) => draft.values[f] !== JOB_FORM_DEFAULTS[f]).map((f) => [f, draft.values[f]]),
  );
  const json = JSON.stringify({ id: draft.id, values, errors: draft.errors, preview: draft.preview });
  const body = deflateRawSync(Buffer.from(json, 'utf8')).toString('base64url');
  const value = `${VERSION}.${body}.${mac(keys, `${VERSION}.${body}`).toString('base64url')}`;
  return value.length <= MAX_DRAFT_CHARS ? value : null;
}

/** The draft in a cookie value, or null when it is absent, malformed, tampered with or signed by another key. */
export function openDraft(keys: SessionKeys, value: string | undefined): Draft | null {
  const match =
    value && value.length <= MAX_DRAFT_CHARS ? /^d1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  if (!match) return null;
  const given = Buffer.from(match[2]!, 'base64url');
  if (given.length !== 32 || !timingSafeEqual(given, mac(keys, `${VERSION}.${match[1]}`))) return null;
  try {
    const parsed = JSON.parse(
      inflateRawSync(Buffer.from(match[1]!, 'base64url'), { maxOutputLength: MAX_INFLATED_BYTES }).toString('utf8'),
    );
    if (!isDraftId(parsed.id)) return null;
    const values = { ...JOB_FORM_DEFAULTS };
    for (const field of JOB_FIELDS)
      if (typeof parsed.values?.[field] === 'string') values[field] = parsed.values[field];
    const errors: FieldErrors = {};
    for (const [field, message] of Object.entries(parsed.errors ?? {})) {
      if (((JOB_FIELDS as readonly string[]).includes(field) || field === 'form') && typeof message === 'string')
        errors[field as keyof FieldErrors] = message;
    }
    return { id: parsed.id, values, errors, preview: parsed.preview === true };
  } catch {
    return null;
  }
}
