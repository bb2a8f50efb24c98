/**
 * @module secrets — all SQL on the secrets table, and the envelope encryption of its values (AES-256-GCM,
 * node:crypto). Each value has a data key of its own; the data key is sealed under the master key (SECRETS_KEY).
 * Rows name the master key that sealed them, so a rotation re-encrypts exactly the rows under an older key, and a
 * reader mid-rotation picks the key a row needs. Values are decrypted only by `secretValues` (the worker, at the
 * attempt); nothing here returns a value to any other caller.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';

/** The master keys: `current` seals, every key opens the rows it sealed. */
export interface Keyring {
  current: Buffer;
  previous: readonly Buffer[];
}

/** What the API may show of a secret: never its value. */
export interface SecretMeta {
  name: string;
  version: number;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A master key's id: the first 16 hex digits of its SHA-256 (names the key without revealing it). */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** SECRETS_KEY's text (32 random bytes in base64) as a key, or why not. */
export function parseMasterKey(text: string): Buffer | string {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32 || key.toString('base64') !== text.trim())
    return 'must be 32 random bytes in base64 (openssl rand -base64 32)';
  return key;
}

function seal(key: Buffer, plain: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function open(key: Buffer, sealed: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/** A value sealed under a fresh data key, itself sealed under the current master key. */
function sealValue(keyring: Keyring, value: string) {
  const dataKey = randomBytes(32);
  return {
    valueSealed: seal(dataKey, Buffer.from(value, 'utf8')),
    keySealed: seal(keyring.current, dataKey),
    masterKey: keyId(keyring.current),
  };
}

function openValue(
  keyring: Keyring,
  row: { name: string; value_sealed: Buffer; key_sealed: Buffer; master_key: string },
) {
  const master = [keyring.current, ...keyring.previous].find((k) => keyId(k) === row.master_key);
  if (!master)
    throw new Error(
      `secret ${JSON.stringify(row.name)} is sealed under master key ${row.master_key}, which is not configured`,
    );
  return open(open(master, row.key_sealed), row.value_sealed).toString('utf8');
}

const META = `name, version, created_at, created_by, updated_at, updated_by`;
const toMeta = (r: Record<string, unknown>): SecretMeta => ({
  name: r.name as string,
  version: r.version as number,
  createdAt: r.created_at as Date,
  createdBy: r.created_by as string,
  updatedAt: r.updated_at as Date,
  updatedBy: r.updated_by as string,
});

/** Creates or replaces a secret's value (a replace is version + 1). */
export async function secretPut(
  pool: pg.Pool,
  keyring: Keyring,
  input: { name: string; value: string; actor: string },
): Promise<{ secret: SecretMeta; created: boolean }> {
  const sealed = sealValue(keyring, input.value);
  const { rows } = await pool.query(
    `INSERT INTO secrets (name, value_sealed, key_sealed, master_key, created_by, updated_by)
     VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (name) DO UPDATE SET version = secrets.version + 1, value_sealed = EXCLUDED.value_sealed,
       key_sealed = EXCLUDED.key_sealed, master_key = EXCLUDED.master_key, updated_at = now(), updated_by = $5
     RETURNING ${META}, (xmax = 0) AS created`,
    [input.name, sealed.valueSealed, sealed.keySealed, sealed.masterKey, input.actor],
  );
  return { secret: toMeta(rows[0]), created: rows[0].created as boolean };
}

/** @public: for the secrets API (issue 29), not yet built. */
export async function secretList(pool: pg.Pool): Promise<SecretMeta[]> {
  const { rows } = await pool.query(`SELECT ${META} FROM secrets ORDER BY name`);
  return rows.map(toMeta);
}

/** Deletes a secret; false when there was none. @public: for the secrets API (issue 29), not yet built. */
export async function secretDelete(pool: pg.Pool, name: string): Promise<boolean> {
  const { rowCount } = await pool.query(`DELETE FROM secrets WHERE name = $1`, [name]);
  return (rowCount ?? 0) > 0;
}

/** Which of these names exist (what a job may reference). @public: for the secrets API (issue 29), not yet built. */
export async function secretsExisting(pool: pg.Pool, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await pool.query(`SELECT name FROM secrets WHERE name = ANY($1::text[])`, [names]);
  return new Set(rows.map((r) => r.name as string));
}

/** The values of these secrets, decrypted (the worker, at an attempt); a missing name is left out. */
export async function secretValues(
  pool: pg.Pool,
  keyring: Keyring,
  names: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await pool.query(
    `SELECT name, value_sealed, key_sealed, master_key FROM secrets WHERE name = ANY($1::text[])`,
    [names],
  );
  return new Map(rows.map((r) => [r.name as string, openValue(keyring, r)]));
}

/**
 * Re-encrypts every secret not sealed under the current master key: a fresh data key and fresh ciphertexts, the
 * version kept. Each row is rewritten only if it is still as read (a concurrent PUT wins). Returns how many.
 */
export async function secretsRotate(pool: pg.Pool, keyring: Keyring): Promise<number> {
  const current = keyId(keyring.current);
  const { rows } = await pool.query(
    `SELECT name, version, value_sealed, key_sealed, master_key FROM secrets WHERE master_key <> $1`,
    [current],
  );
  let rotated = 0;
  for (const row of rows) {
    const sealed = sealValue(keyring, openValue(keyring, row));
    const { rowCount } = await pool.query(
      `UPDATE secrets SET value_sealed = $3, key_sealed = $4, master_key = $5
       WHERE name = $1 AND version = $2 AND master_key = $6`,
      [row.name, row.version, sealed.valueSealed, sealed.keySealed, sealed.masterKey, row.master_key],
    );
    rotated += rowCount ?? 0;
  }
  return rotated;
}
