/** @module schemas/audit — the audit trail on the wire. */
import { z } from '@hono/zod-openapi';
import { AUDIT_ACTIONS } from '@jobs/core';
import { Instant } from './common';

export const AuditListQuery = z.object({
  outcome: z
    .enum(['ok', 'refused'])
    .optional()
    .openapi({ param: { name: 'outcome', in: 'query' } }),
  key: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ param: { name: 'key', in: 'query' }, description: 'Only rows of the key with this name.' }),
  action: z
    .enum(AUDIT_ACTIONS)
    .optional()
    .openapi({ param: { name: 'action', in: 'query' } }),
  target: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({
      param: { name: 'target', in: 'query' },
      description: 'Only rows about this target, e.g. `job:42`, `execution:7`, `lane:short`.',
    }),
});

export const AuditRow = z
  .object({
    id: z.string(),
    at: Instant,
    key: z.string().openapi({ description: 'The name of the API key (never the key itself).' }),
    action: z.enum(AUDIT_ACTIONS),
    target: z.string(),
    outcome: z
      .enum(['ok', 'refused'])
      .openapi({ description: "`refused`: the key's role was too low, or a sign-in failed; nothing changed." }),
    request_id: z.string().nullable(),
    source: z
      .string()
      .nullable()
      .openapi({ description: "The client address (API Gateway's source IP on AWS, the socket's peer locally)." }),
    changes: z
      .record(z.string(), z.object({ old: z.unknown(), new: z.unknown() }))
      .nullable()
      .openapi({ description: 'Changed fields, old and new; values of secret-looking fields are `***`.' }),
  })
  .openapi('AuditRow');
