/**
 * @module access — roles, the actor behind a change, and the audit entry a change is recorded with. The edge (API,
 * dashboard) resolves a key to an actor; commands turn it into audit entries that the store writes in the same
 * transaction as the change itself.
 */

import { maskHeaders } from './targets';

/** From least to most: `read` sees everything, `operate` also runs and stops things, `admin` also changes jobs. */
export const ROLES = ['read', 'operate', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** True when a principal with role `have` may do what needs `need`. */
export function roleAllows(have: Role, need: Role): boolean {
  return ROLES.indexOf(have) >= ROLES.indexOf(need);
}

/** Who asked for a change: the key's name (never its value), the request, and where it came from. */
export interface Actor {
  keyName: string;
  requestId: string | null;
  /** The client's address as the edge saw it (the socket, or API Gateway's source IP); null when unknown. */
  source: string | null;
}

/** Every action the audit trail records. */
export const AUDIT_ACTIONS = [
  'job.create',
  'job.update',
  'job.delete',
  'job.trigger',
  'job.pause',
  'job.resume',
  'job.backfill',
  'execution.cancel',
  'execution.replay',
  'lane.pause',
  'lane.resume',
  'channel.create',
  'channel.update',
  'channel.delete',
  'channel.test',
  'session.sign_in',
  'session.sign_out',
  // Only refused reads of the audit trail are recorded (by a key below admin); reads themselves are not changes.
  'audit.read',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Old and new value of each changed field (secrets already masked by the store). */
export type FieldChanges = Record<string, { old: unknown; new: unknown }>;

export interface AuditEntry extends Actor {
  action: AuditAction;
  /** What was acted on: `job:42`, `execution:7`, `lane:short`, `session:<id prefix>`. */
  target: string;
  /** `refused`: the principal's role was too low, or a sign-in failed; nothing changed. */
  outcome: 'ok' | 'refused';
  changes: FieldChanges | null;
}

/** The audit entry for `action` on `target` by the command's actor; undefined when no actor is known (internal use). */
export function auditEntry(
  actor: Actor | undefined,
  action: AuditAction,
  target: string,
  changes: FieldChanges | null = null,
): AuditEntry | undefined {
  return actor ? { ...actor, action, target, outcome: 'ok', changes } : undefined;
}

const SECRET_NAME = /secret|passw|token|api[_-]?key|authorization|credential|private[_-]?key|cookie|signature/i;
export const MASK = '***';

/**
 * A copy of `value` with every property whose name suggests a secret replaced by `***`, at any depth, so old and new
 * values of a payload or of request headers can be recorded without keeping what they protect.
 * @example maskSecrets({ token: 'abc', n: 1 }) // { token: '***', n: 1 }
 */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 20) return value;
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (SECRET_NAME.test(k) && v !== null && v !== undefined) out[k] = MASK;
    // Request headers follow the HTTP target's own rule (targets.ts), so `X-Service-Key` is masked here too.
    else if (k === 'headers' && v !== null && typeof v === 'object' && !Array.isArray(v))
      out[k] = maskHeaders(v as Record<string, string>);
    else out[k] = maskSecrets(v, depth + 1);
  }
  return out;
}

/**
 * The fields that differ between `before` and `after` (compared as JSON), each with its old and new value.
 * @example fieldChanges({ a: 1, b: 2 }, { a: 1, b: 3 }) // { b: { old: 2, new: 3 } }
 */
export function fieldChanges(before: Record<string, unknown> | null, after: Record<string, unknown>): FieldChanges {
  const changes: FieldChanges = {};
  for (const key of new Set([...Object.keys(before ?? {}), ...Object.keys(after)])) {
    const old = before ? (before[key] ?? null) : null;
    const now = after[key] ?? null;
    if (JSON.stringify(old) !== JSON.stringify(now)) changes[key] = { old, new: now };
  }
  return changes;
}

/**
 * True when a principal of `role` sees the data a job carries (its payload, an HTTP target's body) in full: operate
 * and admin, who can run the job with it and edit it. A read key sees it as the audit trail does, every field
 * whose name suggests a secret masked (maskSecrets), in the API and the dashboard alike.
 */
function seesData(role: Role | null | undefined): boolean {
  return role !== null && role !== undefined && roleAllows(role, 'operate');
}

/** A job (or an execution) as a principal of `role` may see it: see seesData. */
export function dataFor<J extends { payload?: unknown; http?: { body?: unknown } | null }>(
  role: Role | null | undefined,
  job: J,
): J {
  if (seesData(role)) return job;
  const masked: J = { ...job, payload: maskSecrets(job.payload) };
  if (job.http && job.http.body !== undefined) masked.http = { ...job.http, body: maskSecrets(job.http.body) };
  return masked;
}

/** A recorded change (a job version's) as a principal of `role` may see it: see seesData. */
export function changeFor<C extends { field: string; old: unknown; new: unknown }>(
  role: Role | null | undefined,
  change: C,
): C {
  if (seesData(role)) return change;
  return { ...change, old: maskSecrets(change.old), new: maskSecrets(change.new) };
}
