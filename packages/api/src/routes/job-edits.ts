/** @module routes/job-edits — jobs that change: PATCH, PUT by name (and its plan), the version history, and backfill. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import {
  backfillJob,
  checkSpec,
  keepMaskedHeaders,
  NotFoundError,
  updateJob,
  upsertJobByName,
  type AddressPolicy,
  type EditPlan,
  type Job,
} from '@jobs/core';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { validationFailed, zodDetails } from '../errors';
import { jsonBody } from './bodies';
import {
  IdParams,
  bodyErrorResponses,
  conflictResponse,
  errorResponses,
  json,
  notFoundResponse,
} from '../schemas/common';
import {
  BackfillBody,
  BackfillResult,
  Job as JobSchema,
  JobCreate,
  JobName,
  JobPatch,
  JobPlan,
  JobPut,
  JobVersionList,
  NameParams,
  type JobCreateBody,
  type JobPutBody,
} from '../schemas/jobs';
import { bodyChanges, changeJson, jobJson, specBody, toJobSpec } from '../serializers';

const tags = ['jobs'];

/**
 * The plan of a PATCH: the current definition with the given fields replaced, checked exactly as a create body is
 * (the same 400 details), and the fields that really change.
 */
function patchPlan(
  current: Job,
  patch: Record<string, unknown>,
  shortLaneMaxTimeoutMs: number,
  targetPolicy?: AddressPolicy,
): EditPlan {
  const { allow_past: allowPast, ...fields } = patch;
  const before = specBody(current);
  const parsed = JobCreate.safeParse({ ...before, ...withoutUndefined(fields), allow_past: allowPast ?? false });
  if (!parsed.success) throw validationFailed(zodDetails(parsed.error, 'body'));
  return replacePlan(current, parsed.data, shortLaneMaxTimeoutMs, targetPolicy);
}

/**
 * The plan of replacing a job's definition by a whole create body. A header value sent back masked (as responses and
 * prefilled forms show it) keeps the stored value of that header.
 */
export function replacePlan(
  current: Job,
  body: JobCreateBody,
  shortLaneMaxTimeoutMs: number,
  targetPolicy?: AddressPolicy,
): EditPlan {
  const spec = keepMaskedHeaders(toJobSpec(body, shortLaneMaxTimeoutMs, targetPolicy), current);
  return { spec, changes: bodyChanges(specBody(current), specBody(spec)), allowPast: body.allow_past };
}

/** The name from the path (checked and normalised like a create body's) and the body with it. */
export function putInput(pathName: string, body: JobPutBody): { name: string; body: JobCreateBody } {
  const named = JobName.safeParse(pathName);
  if (!named.success) throw validationFailed(zodDetails(named.error, 'name').map((d) => ({ ...d, path: 'name' })));
  if (body.name !== undefined && body.name !== named.data) {
    throw validationFailed([
      { path: 'name', message: `must match the name in the path (${JSON.stringify(named.data)}), or be left out` },
    ]);
  }
  return { name: named.data, body: { ...body, name: named.data } };
}

const withoutUndefined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

export function jobEditRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(
    createRoute({
      method: 'patch',
      path: '/jobs/{id}',
      operationId: 'updateJob',
      middleware: [needs('admin', 'job.update')] as const,
      tags,
      summary: 'Change a job in place',
      description:
        'Any subset of the create fields; the resulting job is validated exactly like a create body (null clears a ' +
        'field: send `"cron_expr": null` with a `run_at` to switch to a one-off). The change applies to every attempt ' +
        'that starts after this returns; running attempts finish on their version. A change that changes nothing ' +
        'keeps the version.',
      request: { params: IdParams, body: jsonBody(JobPatch, true) },
      responses: {
        200: json(JobSchema, 'The job'),
        ...errorResponses,
        404: notFoundResponse,
        409: { ...conflictResponse, description: 'Another live job has this name' },
        ...bodyErrorResponses,
      },
    }),
    async (c) => {
      const patch = c.req.valid('json') as Record<string, unknown>;
      const { job } = await updateJob(c.var.commands, {
        id: c.req.valid('param').id,
        actor: c.var.principal.name,
        plan: (current) => patchPlan(current, patch, deps.shortLaneMaxTimeoutMs, deps.targetPolicy),
      });
      return c.json(jobJson(job), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/jobs/by-name/{name}',
      operationId: 'upsertJobByName',
      middleware: [needs('admin', 'job.update')] as const,
      tags,
      summary: 'Create or replace a job by name',
      description:
        'A whole create body (fields left out take their defaults). 201 when the job was created, 200 when it was ' +
        'replaced or already had this definition (the version moves only on a real change). Safe to call concurrently.',
      request: { params: NameParams, body: jsonBody(JobPut, true) },
      responses: {
        201: json(JobSchema, 'The job, created'),
        200: json(JobSchema, 'The job, updated or unchanged'),
        ...errorResponses,
        409: { ...conflictResponse, description: 'The job kept changing while the request was applied' },
        ...bodyErrorResponses,
      },
    }),
    async (c) => {
      const { name, body: full } = putInput(c.req.valid('param').name, c.req.valid('json'));
      const spec = toJobSpec(full, deps.shortLaneMaxTimeoutMs, deps.targetPolicy);
      const { job, created } = await upsertJobByName(c.var.commands, {
        name,
        actor: c.var.principal.name,
        spec,
        allowPast: full.allow_past,
        plan: (current) => replacePlan(current, full, deps.shortLaneMaxTimeoutMs, deps.targetPolicy),
      });
      return c.json(jobJson(job), created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/by-name/{name}/plan',
      operationId: 'planJobByName',
      // Writes nothing, but it is half of an apply (the admin's work): the same role as the PUT it plans.
      middleware: [needs('admin')] as const,
      tags,
      summary: 'What a PUT of this body would do, without doing it',
      description:
        'The same validation as PUT /jobs/by-name/{name} (the same 400s); nothing is written. Used by `npm run jobs -- apply --dry-run`.',
      request: { params: NameParams, body: jsonBody(JobPut, true) },
      responses: {
        200: json(JobPlan, 'create, update (with the fields that change) or unchanged'),
        ...errorResponses,
        ...bodyErrorResponses,
      },
    }),
    async (c) => {
      const { name, body } = putInput(c.req.valid('param').name, c.req.valid('json'));
      const spec = toJobSpec(body, deps.shortLaneMaxTimeoutMs, deps.targetPolicy);
      checkSpec(c.var.commands, spec, { now: deps.clock.now(), allowPast: body.allow_past, runAtChanged: true });
      const current = await deps.store.jobGetByName(name);
      if (!current)
        return c.json(
          {
            action: 'create' as const,
            job_id: null,
            changes: bodyChanges({}, specBody(spec)).map((change) => changeJson(change)),
          },
          200,
        );
      const { changes } = replacePlan(current, body, deps.shortLaneMaxTimeoutMs, deps.targetPolicy);
      return c.json(
        {
          action: changes.length > 0 ? ('update' as const) : ('unchanged' as const),
          job_id: current.id,
          changes: changes.map((change) => changeJson(change)),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/jobs/{id}/versions',
      operationId: 'listJobVersions',
      middleware: [needs('read')] as const,
      tags,
      summary: "A job's versions, newest first: when, who, and the fields each changed (old and new values)",
      request: { params: IdParams },
      responses: {
        200: json(JobVersionList, 'The versions (at most 1,000, newest first)'),
        ...errorResponses,
        404: notFoundResponse,
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const versions = await deps.store.jobVersions(id);
      if (!versions) throw new NotFoundError('job', id);
      const data = versions.map((v) => ({
        version: v.version,
        actor: v.actor,
        created_at: v.createdAt.toISOString(),
        changes: v.changes.map((change) => changeJson(change, c.var.principal.role)),
      }));
      return c.json({ data }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/jobs/{id}/backfill',
      operationId: 'backfillJob',
      middleware: [needs('operate', 'job.backfill')] as const,
      tags,
      summary: 'Run the fire times a job had in a past range',
      description:
        "The fire times in [from, to) by the job's own schedule and DST rules (at most 1,000; more is a 400), each " +
        'created as an execution with trigger "backfill" unless that fire time already has one (`already_run` lists those). ' +
        '`dry_run`: only list them.',
      request: { params: IdParams, body: jsonBody(BackfillBody, true) },
      responses: {
        200: json(BackfillResult, 'The fire times, and the executions created'),
        ...errorResponses,
        404: notFoundResponse,
        ...bodyErrorResponses,
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const result = await backfillJob(c.var.commands, {
        jobId: c.req.valid('param').id,
        from: new Date(body.from),
        to: new Date(body.to),
        dryRun: body.dry_run,
      });
      return c.json(
        {
          fire_times: result.fireTimes.map((t) => t.toISOString()),
          created: result.created.length,
          execution_ids: result.created.map((e) => e.id),
          already_run: result.existing.map((x) => ({
            fire_time: x.fireTime.toISOString(),
            execution_id: x.executionId,
          })),
          dry_run: body.dry_run,
        },
        200,
      );
    },
  );
}
