/** @module routes/jobs — create, list, read, delete, trigger, pause and resume jobs; a job's executions. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { createJob, deleteJob, NotFoundError, pauseJob, resumeJob, triggerJob } from '@jobs/core';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { keysetPage, keysetPageJson, pageResponse } from '../pagination';
import { inSpan } from '../tracing';
import { emptyBodyIsEmptyObject, jsonBody } from './bodies';
import {
  IdParams,
  PageQuery,
  bodyErrorResponses,
  conflictResponse,
  errorResponses,
  idempotencyMismatchResponse,
  json,
  notFoundResponse,
  pageSchema,
} from '../schemas/common';
import {
  Execution,
  ExecutionStatusQuery,
  ExecutionSummary,
  IdempotencyHeaders,
  TriggerBody,
} from '../schemas/executions';
import { Job, JobCreate, JobListQuery } from '../schemas/jobs';
import { executionJson, executionSummaryJson, jobJson, toJobSpec } from '../serializers';

const tags = ['jobs'];
const JobPage = pageSchema(Job, 'JobPage');
const ExecutionPage = pageSchema(ExecutionSummary, 'ExecutionPage');

export function jobRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs',
      operationId: 'createJob',
      middleware: [needs('admin', 'job.create')] as const,
      tags,
      summary: 'Create a job',
      request: { body: jsonBody(JobCreate, true) },
      responses: {
        201: json(Job, 'The job'),
        ...errorResponses,
        409: { ...conflictResponse, description: 'A live job already has this name' },
        ...bodyErrorResponses,
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const job = await createJob(c.var.commands, toJobSpec(body, deps.shortLaneMaxTimeoutMs, deps.targetPolicy), {
        allowPast: body.allow_past,
      });
      return c.json(jobJson(job), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/jobs',
      operationId: 'listJobs',
      middleware: [needs('read')] as const,
      tags,
      summary: 'List jobs, newest first',
      request: { query: JobListQuery.extend(PageQuery) },
      responses: { 200: json(JobPage, 'A page of jobs'), ...errorResponses },
    }),
    async (c) => {
      const { status, limit, cursor } = c.req.valid('query');
      const role = c.var.principal.role;
      const page = await keysetPage(
        (n) => deps.store.jobList({ status, before: cursor, limit: n }),
        limit,
        (job) => jobJson(job, role),
      );
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{id}',
      operationId: 'getJob',
      middleware: [needs('read')] as const,
      tags,
      summary: 'Get a job, with next_run_at and last_run_at',
      request: { params: IdParams },
      responses: { 200: json(Job, 'The job'), ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const job = await deps.store.jobGet(id);
      if (!job) throw new NotFoundError('job', id);
      return c.json(jobJson(job, c.var.principal.role), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/jobs/{id}',
      operationId: 'deleteJob',
      middleware: [needs('admin', 'job.delete')] as const,
      tags,
      summary: 'Delete a job: no further runs, live executions cancelled, history kept',
      request: { params: IdParams },
      responses: { 204: { description: 'Deleted' }, ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => {
      await deleteJob(c.var.commands, c.req.valid('param').id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{id}/trigger',
      operationId: 'triggerJob',
      tags,
      summary: 'Run a job now',
      middleware: [needs('operate', 'job.trigger'), emptyBodyIsEmptyObject] as const,
      request: { params: IdParams, headers: IdempotencyHeaders, body: jsonBody(TriggerBody, false) },
      responses: {
        201: json(Execution, 'The new execution'),
        200: json(Execution, 'The execution an earlier call with the same Idempotency-Key created'),
        ...errorResponses,
        404: notFoundResponse,
        ...bodyErrorResponses,
        422: idempotencyMismatchResponse,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const body = c.req.valid('json');
      const key = c.req.valid('header')['Idempotency-Key'] ?? null;
      const { record, created } = await inSpan(deps.tracing, c, 'trigger', { 'job.id': id }, async (span) => {
        const result = await triggerJob(c.var.commands, {
          jobId: id,
          payload: body.payload,
          idempotencyKey: key,
          traceparent: span?.traceparent ?? null,
        });
        span?.setAttributes({ 'execution.id': result.record.id, 'execution.created': result.created });
        return result;
      });
      return c.json(executionJson(record), created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{id}/pause',
      operationId: 'pauseJob',
      middleware: [needs('operate', 'job.pause')] as const,
      tags,
      summary: 'Pause a job: no new runs start; scheduled runs already queued are cancelled',
      request: { params: IdParams },
      responses: { 200: json(Job, 'The job'), ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => c.json(jobJson(await pauseJob(c.var.commands, c.req.valid('param').id)), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{id}/resume',
      operationId: 'resumeJob',
      middleware: [needs('operate', 'job.resume')] as const,
      tags,
      summary: 'Resume a job: the next run is computed from now (fire times missed while paused do not run)',
      request: { params: IdParams },
      responses: { 200: json(Job, 'The job'), ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => c.json(jobJson(await resumeJob(c.var.commands, c.req.valid('param').id)), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{id}/executions',
      operationId: 'listJobExecutions',
      middleware: [needs('read')] as const,
      tags,
      summary: "A job's executions, newest first",
      description: 'A deleted job answers 404 here; its history stays readable with GET /executions?job_id=.',
      request: { params: IdParams, query: ExecutionStatusQuery.extend(PageQuery) },
      responses: { 200: json(ExecutionPage, 'A page of executions'), ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { status, limit, cursor } = c.req.valid('query');
      if (!(await deps.store.jobGet(id))) throw new NotFoundError('job', id);
      const page = await keysetPageJson(
        (n) => deps.store.executionListIso({ jobId: id, status, before: cursor, limit: n }),
        limit,
        executionSummaryJson,
      );
      return pageResponse(c, page);
    },
  );
}
