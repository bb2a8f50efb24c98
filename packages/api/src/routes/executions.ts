/** @module routes/executions — list and read executions; cancel a live one; replay a dead or failed one. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { cancelExecution, NotFoundError, replayExecution, type Role } from '@jobs/core';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { ApiError } from '../errors';
import { keysetPageJson, pageResponse } from '../pagination';
import {
  IdParams,
  PageQuery,
  conflictResponse,
  errorResponses,
  json,
  notFoundResponse,
  pageSchema,
  bodyErrorResponses,
} from '../schemas/common';
import { Execution, ExecutionListQuery, ExecutionSummary, ReplayBody } from '../schemas/executions';
import { executionJson, executionSummaryJson } from '../serializers';
import { emptyBodyIsEmptyObject, jsonBody } from './bodies';

const tags = ['executions'];
const ExecutionPage = pageSchema(ExecutionSummary, 'ExecutionPage');

export function executionRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  const load = async (id: string, role?: Role) => {
    const execution = await deps.store.executionGet(id);
    if (!execution) throw new NotFoundError('execution', id);
    return executionJson(execution, role);
  };

  app.openapi(
    createRoute({
      method: 'get',
      path: '/executions',
      operationId: 'listExecutions',
      middleware: [needs('read')] as const,
      tags,
      summary: 'List executions, newest first (filter by status and job_id); rows carry no payload or output',
      request: { query: ExecutionListQuery.extend(PageQuery) },
      responses: { 200: json(ExecutionPage, 'A page of executions'), ...errorResponses },
    }),
    async (c) => {
      const { status, job_id: jobId, limit, cursor } = c.req.valid('query');
      const page = await keysetPageJson(
        (n) => deps.store.executionListIso({ jobId, status, before: cursor, limit: n }),
        limit,
        executionSummaryJson,
      );
      return pageResponse(c, page);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/executions/{id}',
      operationId: 'getExecution',
      middleware: [needs('read')] as const,
      tags,
      summary: 'Get one execution (one attempt), with output, error and timings',
      request: { params: IdParams },
      responses: { 200: json(Execution, 'The execution'), ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => c.json(await load(c.req.valid('param').id, c.var.principal.role), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/executions/{id}/cancel',
      operationId: 'cancelExecution',
      middleware: [needs('operate', 'execution.cancel')] as const,
      tags,
      summary: 'Cancel a queued, retrying or running execution (a running command is killed)',
      request: { params: IdParams },
      responses: {
        200: json(Execution, 'The cancelled execution'),
        ...errorResponses,
        404: notFoundResponse,
        409: { ...conflictResponse, description: 'The execution had already finished' },
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const result = await cancelExecution(c.var.commands, id);
      if (!result.cancelled) {
        throw new ApiError(
          409,
          'conflict',
          `execution ${id} is already ${result.status}; only queued, retrying or running executions can be cancelled`,
        );
      }
      return c.json(await load(id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/executions/{id}/replay',
      operationId: 'replayExecution',
      tags,
      summary: 'Replay a dead or failed execution as a new attempt chain (once, unless force)',
      middleware: [needs('operate', 'execution.replay'), emptyBodyIsEmptyObject] as const,
      request: { params: IdParams, body: jsonBody(ReplayBody, false) },
      responses: {
        201: json(Execution, 'The new execution'),
        ...errorResponses,
        404: notFoundResponse,
        409: {
          ...conflictResponse,
          description:
            'The execution is not dead or failed, was replayed already (without force), or its job was deleted',
        },
        ...bodyErrorResponses,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { force } = c.req.valid('json');
      let result: Awaited<ReturnType<typeof replayExecution>>;
      try {
        result = await replayExecution(c.var.commands, id, { force });
      } catch (error) {
        // The store cannot replay an execution of a deleted job and reports it as unknown; say why instead.
        if (error instanceof NotFoundError && (await deps.store.executionGet(id))) {
          throw new ApiError(409, 'conflict', `execution ${id} belongs to a deleted job and cannot be replayed`);
        }
        throw error;
      }
      if (!result.execution && result.replayedBy !== null && (result.status === 'dead' || result.status === 'failed')) {
        throw new ApiError(
          409,
          'already_replayed',
          `execution ${id} was replayed already, as execution ${result.replayedBy}; send {"force": true} to replay it again`,
        );
      }
      if (!result.execution) {
        throw new ApiError(
          409,
          'conflict',
          `execution ${id} is ${result.status}; only dead or failed executions can be replayed`,
        );
      }
      return c.json(await load(result.execution.id), 201);
    },
  );
}
