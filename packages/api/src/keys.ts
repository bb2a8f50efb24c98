/**
 * @module keys — the configured API keys: `name:role:key` entries, or bare keys (admin keys named key1, key2, … by
 * their position), their lookup in constant time, and the fingerprint a dashboard session keeps instead of the key.
 */
import { ROLES, type Role } from '@jobs/core';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export interface ApiKey {
  /** Shown in logs, events and the audit trail in place of the key. */
  name: string;
  role: Role;
  key: string;
}

/** Who a request acts as once its key is known. */
export interface Principal {
  name: string;
  role: Role;
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Fewest characters a key may have: a short key can be guessed (METRICS_TOKEN has the same floor). */
const API_KEY_MIN_LENGTH = 16;
const NAMED_ENTRY = new RegExp(`^([^:]*):(${ROLES.join('|')}):(.*)$`);

/**
 * Parses API_KEYS (comma-separated entries). Problems name an entry by its position and never quote a key.
 * @example parseApiKeys('ci:operate:k1,k2') // keys: [{ name: 'ci', role: 'operate', key: 'k1' }, { name: 'key2', role: 'admin', key: 'k2' }]
 */
export function parseApiKeys(list: string): { keys: ApiKey[]; problems: string[] } {
  const problems: string[] = [];
  const keys: ApiKey[] = [];
  list.split(',').forEach((raw, i) => {
    const entry = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (entry === '') return;
    const named = NAMED_ENTRY.exec(entry);
    const [name, role, key] = named
      ? [named[1]!, named[2] as Role, named[3]!]
      : [`key${i + 1}`, 'admin' as const, entry];
    if (!NAME.test(name)) {
      problems.push(
        `API_KEYS: entry ${i + 1} has a name that is not 1-64 letters, digits, or . _ - (format name:role:key)`,
      );
    } else if (key === '') {
      problems.push(`API_KEYS: entry ${i + 1} (${name}) has an empty key`);
    } else if (!/^[\x21-\x7e]+$/.test(key)) {
      problems.push(
        `API_KEYS: key ${i + 1} holds whitespace or a character outside printable ASCII; a bearer token cannot carry it`,
      );
    } else if (key.length < API_KEY_MIN_LENGTH) {
      problems.push(
        `API_KEYS: key ${i + 1} (${name}) is shorter than ${API_KEY_MIN_LENGTH} characters and could be guessed; make one with \`openssl rand -hex 24\``,
      );
    } else if (keys.some((k) => k.name === name)) {
      problems.push(
        `API_KEYS: entry ${i + 1} repeats the name ${name}; every key needs its own name (the audit trail tells them apart by it)`,
      );
    } else if (keys.some((k) => k.key === key)) {
      problems.push(`API_KEYS: entry ${i + 1} (${name}) repeats the key of ${keys.find((k) => k.key === key)!.name}`);
    } else {
      keys.push({ name, role, key });
    }
  });
  return { keys, problems };
}

/** Bare strings (tests, older callers) as admin keys named by position, like a bare entry of API_KEYS. */
export function apiKeyList(keys: readonly (string | ApiKey)[]): ApiKey[] {
  return keys.map((k, i) => (typeof k === 'string' ? { name: `key${i + 1}`, role: 'admin', key: k } : k));
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** A lookup of keys by value: SHA-256 digests compared with timingSafeEqual against every key, with no early exit. */
export function keyMatcher(keys: readonly ApiKey[]): (given: string) => ApiKey | null {
  const digests = keys.map((k) => digest(k.key));
  return (given) => {
    const g = digest(given);
    let found: ApiKey | null = null;
    digests.forEach((d, i) => {
      if (timingSafeEqual(g, d) && found === null) found = keys[i]!;
    });
    return found;
  };
}

const FINGERPRINT_LABEL = 'jobs/key-fingerprint/v1';

/** What a session stores to know its key is still configured: an HMAC of a fixed label under the key. */
export function keyFingerprint(key: string): Buffer {
  return createHmac('sha256', key).update(FINGERPRINT_LABEL).digest();
}
