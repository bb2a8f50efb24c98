/**
 * @module dashboard/session — signed session cookies and CSRF tokens for the dashboard, with no server-side state
 * (a Lambda container may serve the next request, or none at all).
 *
 * A session is `v1.<id>.<expiry>.<mac>`: a random id, an expiry in Unix seconds, and an HMAC-SHA256 of both under a
 * secret derived from one API key. The raw key is never in the cookie; removing a key from API_KEYS ends the
 * sessions made with it. A request's CSRF token is an HMAC of the session id under the same secret. Without a session
 * (no API keys configured, or the login form), forms use a double-submit cookie: a random value the page repeats.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const VERSION = 'v1';
const SECRET_LABEL = 'jobs-dashboard/session/v1';
const SESSION_FORMAT = /^v1\.([A-Za-z0-9_-]{22})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/;
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export interface Session {
  id: string;
  expiresAt: Date;
  /** Index of the API key whose secret signed it. */
  keyIndex: number;
}

/** Secrets derived from the API keys, once per app (an HMAC with the key, so the key itself is never reused). */
export interface SessionKeys {
  secrets: Buffer[];
}

export function sessionKeys(apiKeys: readonly string[]): SessionKeys {
  return { secrets: apiKeys.map((key) => createHmac('sha256', key).update(SECRET_LABEL).digest()) };
}

const mac = (secret: Buffer, text: string) => createHmac('sha256', secret).update(text).digest();
const b64 = (bytes: Buffer) => bytes.toString('base64url');

/** A new session signed with key `keyIndex`, valid for SESSION_TTL_MS from `now`: the cookie value. */
export function mintSession(keys: SessionKeys, keyIndex: number, now: Date): string {
  const secret = keys.secrets[keyIndex];
  if (!secret) throw new Error(`no API key at index ${keyIndex}`);
  const id = b64(randomBytes(16));
  const expiry = Math.floor((now.getTime() + SESSION_TTL_MS) / 1000);
  return `${VERSION}.${id}.${expiry}.${b64(mac(secret, `${VERSION}.${id}.${expiry}`))}`;
}

/**
 * The session a cookie value carries, or null when it is malformed, expired, too far in the future, or signed by no
 * configured key. Every key's MAC is compared in constant time, with no early exit.
 */
export function verifySession(keys: SessionKeys, value: string | undefined, now: Date): Session | null {
  const match = value ? SESSION_FORMAT.exec(value) : null;
  if (!match) return null;
  const [, id, expiryText, given] = match as unknown as [string, string, string, string];
  const expiresAt = new Date(Number(expiryText) * 1000);
  if (expiresAt <= now || expiresAt.getTime() > now.getTime() + SESSION_TTL_MS + 60_000) return null;
  const givenMac = Buffer.from(given, 'base64url');
  // Only the canonical encoding: the last character's 2 padding bits must not give one MAC several spellings.
  if (givenMac.length !== 32 || b64(givenMac) !== given) return null;
  let keyIndex = -1;
  keys.secrets.forEach((secret, index) => {
    if (timingSafeEqual(givenMac, mac(secret, `${VERSION}.${id}.${expiryText}`)) && keyIndex < 0) keyIndex = index;
  });
  return keyIndex < 0 ? null : { id, expiresAt, keyIndex };
}

/** The CSRF token of a session: only someone holding the key's secret can compute it for a session id. */
export function sessionCsrfToken(keys: SessionKeys, session: Session): string {
  return b64(mac(keys.secrets[session.keyIndex]!, `csrf.${session.id}`));
}

/** A fresh value for the double-submit cookie. */
export function newFormToken(): string {
  return b64(randomBytes(32));
}

export function isFormToken(value: string | undefined): value is string {
  return value !== undefined && TOKEN_FORMAT.test(value);
}

/** Constant-time equality of two tokens (their SHA-256 digests, so lengths do not leak either). */
export function tokensEqual(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a === '' || b === '') return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Index of the API key `given` matches, or -1. Compares SHA-256 digests in constant time against every key (as the
 * bearer check does), so neither the content nor the length of a key leaks.
 */
export function matchApiKey(apiKeys: readonly string[], given: string): number {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  const g = digest(given);
  let found = -1;
  apiKeys.forEach((key, index) => {
    if (timingSafeEqual(g, digest(key)) && found < 0) found = index;
  });
  return found;
}
