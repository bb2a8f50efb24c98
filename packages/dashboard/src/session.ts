/**
 * @module dashboard/session — dashboard sessions, kept in PostgreSQL (dashboard_sessions), and CSRF tokens.
 *
 * The cookie holds `s2.<token>`: 32 random bytes. The table keeps only the token's SHA-256, the key's name and a
 * fingerprint of the key (an HMAC, never the key), so signing out ends the session for every copy of the cookie,
 * and a session whose key was removed from API_KEYS (its fingerprint no longer matches a configured key) is ended at
 * its next use. The role comes from the current configuration, so changing a key's role applies at once.
 * A request's CSRF token is an HMAC of the session token. Without a session (no API keys configured, or the login
 * form), forms use a double-submit cookie: a random value the page repeats.
 */
import { apiKeyList, keyFingerprint, type ApiKey, type ApiDeps } from '@jobs/api';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const SECRET_LABEL = 'jobs-dashboard/session/v1';
const SESSION_FORMAT = /^s2\.([A-Za-z0-9_-]{43})$/;
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** A live session: its token (from the cookie) and the configured key it was made with. */
export interface Session {
  token: string;
  tokenHash: Buffer;
  key: ApiKey;
}

/** The configured keys, with what sessions and drafts derive from them, once per app. */
export interface SessionKeys {
  keys: ApiKey[];
  /** Per key, an HMAC secret derived from it (drafts are signed with the first). */
  secrets: Buffer[];
  /** Key fingerprint (hex) to key: a session's key must still be one of these. */
  byFingerprint: Map<string, ApiKey>;
}

export function sessionKeys(apiKeys: ApiDeps['apiKeys']): SessionKeys {
  const keys = apiKeyList(apiKeys);
  return {
    keys,
    secrets: keys.map((k) => createHmac('sha256', k.key).update(SECRET_LABEL).digest()),
    byFingerprint: new Map(keys.map((k) => [keyFingerprint(k.key).toString('hex'), k])),
  };
}

const b64 = (bytes: Buffer) => bytes.toString('base64url');
export const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/** A new session token and the cookie value carrying it. */
export function newSessionToken(): { token: string; cookie: string } {
  const token = b64(randomBytes(32));
  return { token, cookie: `s2.${token}` };
}

/** The token in a session cookie value, or null when it is not one. */
function sessionToken(value: string | undefined): string | null {
  const match = value ? SESSION_FORMAT.exec(value) : null;
  return match ? match[1]! : null;
}

/**
 * The live session a cookie value names, or null: malformed, unknown, signed out, expired, or made with a key that is
 * no longer configured (that session is ended, so it stays dead should the key come back).
 */
export async function loadSession(
  deps: ApiDeps,
  keys: SessionKeys,
  value: string | undefined,
  now: Date,
): Promise<Session | null> {
  const token = sessionToken(value);
  if (!token) return null;
  const hash = tokenHash(token);
  const row = await deps.store.sessionGet(hash, now);
  if (!row) return null;
  const key = keys.byFingerprint.get(row.keyFingerprint.toString('hex'));
  if (!key) {
    await deps.store.sessionEnd(hash);
    deps.logger.info({ event: 'dashboard.session_key_removed', key: row.keyName });
    return null;
  }
  return { token, tokenHash: hash, key };
}

/** The CSRF token of a session: only the holder of the session cookie can compute it. */
export function sessionCsrfToken(session: Session): string {
  return b64(createHmac('sha256', session.token).update('csrf').digest());
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
