/** @module routes/audit — GET /audit: who changed what (admin only), newest first. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AuditRow as StoredRow } from '@jobs/store';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { keysetPage } from '../pagination';
import { AuditListQuery, AuditRow } from '../schemas/audit';
import { PageQuery, errorResponses, json, pageSchema } from '../schemas/common';

const AuditPage = pageSchema(AuditRow, 'AuditPage');

function auditJson(row: StoredRow) {
  return {
    id: row.id,
    at: row.at.toISOString(),
    key: row.keyName,
    action: row.action,
    target: row.target,
    outcome: row.outcome,
    request_id: row.requestId,
    source: row.source,
    changes: row.changes,
  };
}

export function auditRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/audit',
      operationId: 'listAudit',
      middleware: [needs('admin', 'audit.read')] as const,
      tags: ['audit'],
      summary:
        'The audit trail: every change and refused attempt, newest first (filter by key name, action, target, outcome)',
      request: { query: AuditListQuery.extend(PageQuery) },
      responses: { 200: json(AuditPage, 'A page of audit rows'), ...errorResponses },
    }),
    async (c) => {
      const { key, action, target, outcome, limit, cursor } = c.req.valid('query');
      const page = await keysetPage(
        (n) => deps.store.auditList({ keyName: key, action, target, outcome, before: cursor, limit: n }),
        limit,
        auditJson,
      );
      return c.json(page, 200);
    },
  );
}
