/**
 * @module signing — the `Jobs-Signature` header of HTTP targets: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw
 * body>">`, made with the first of the configured secrets. Rotation: add the new secret first, keep the old one
 * listed while receivers move over (a receiver accepts a signature made with any secret it knows), then drop it.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

function sign(secret: string | KeyObject, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** signatureHeader with the signing key prepared once (a string key is re-imported by every createHmac). */
export function signer(secrets: readonly string[]): (body: string, nowMs: number) => string | null {
  const secret = secrets[0];
  if (!secret) return () => null;
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  return (body, nowMs) => {
    const t = Math.floor(nowMs / 1000);
    return `t=${t},v1=${sign(key, t, body)}`;
  };
}

/**
 * What a receiver does: true when `header` signs `body` with one of `secrets` and is at most `toleranceS` old.
 * @example verifySignature(req.headers['jobs-signature'], rawBody, [process.env.JOBS_SECRET])
 */
export function verifySignature(
  header: string | null | undefined,
  body: string,
  secrets: readonly string[],
  options: { nowMs?: number; toleranceS?: number } = {},
): boolean {
  const fields = new Map((header ?? '').split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(fields.get('t'));
  const v1 = Buffer.from(fields.get('v1') ?? '', 'hex');
  if (!Number.isInteger(t) || Math.abs((options.nowMs ?? Date.now()) / 1000 - t) > (options.toleranceS ?? 300))
    return false;
  return secrets.some((secret) => {
    const expected = Buffer.from(sign(secret, t, body), 'hex');
    return expected.length === v1.length && timingSafeEqual(expected, v1);
  });
}
