/**
 * @module routes/output — GET /executions/{id}/output: what an attempt printed, as text; for a running attempt, what
 * it has printed so far (the worker's live buffer in Redis, see packages/queue/src/live-output.ts), and with
 * `?follow=true` a stream of server-sent events until the attempt ends. The dashboard's execution page follows the
 * same stream (`outputResponse`, mounted there behind its session).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { LIVE_STATUSES, NotFoundError, type Execution } from '@jobs/core';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { IdParams, errorResponses, notFoundResponse } from '../schemas/common';

/** How often a follower looks for new output, and for the attempt's end. */
const POLL_MS = 250;
const STATUS_EVERY_MS = 1000;
/** A follow stream ends after this long; EventSource reconnects with Last-Event-ID and resumes where it was. */
const FOLLOW_MAX_MS = 10 * 60_000;
const ENTRY_ID = /^\d{1,20}-\d{1,20}$/;

const isLive = (e: Pick<Execution, 'status'>) => (LIVE_STATUSES as readonly string[]).includes(e.status);

export const OutputQuery = z.object({
  follow: z
    .enum(['true', 'false'])
    .optional()
    .openapi({
      param: { name: 'follow', in: 'query' },
      description: 'true: server-sent events (`output`, then `end`) until the attempt ends.',
    }),
});

/**
 * The output of execution `id` as text, or (follow) as server-sent events: `output` events carry text (their id is
 * a cursor: a reconnect with Last-Event-ID resumes after it), and one `end` event with `{"status": ...}` closes the
 * stream once the attempt is final (its whole output is then GET without follow).
 */
export async function outputResponse(
  c: Context,
  deps: Pick<ApiDeps, 'store' | 'liveOutput' | 'logger'>,
  id: string,
  follow: boolean,
): Promise<Response> {
  const execution = await deps.store.executionGet(id);
  if (!execution) throw new NotFoundError('execution', id);
  const read = (after: string | null) => deps.liveOutput?.read(id, after) ?? Promise.resolve([]);
  if (!follow) {
    const text = isLive(execution) ? (await read(null)).map((e) => e.text).join('') : (execution.output ?? '');
    return c.body(text, 200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Execution-Status': execution.status,
    });
  }
  const resumeFrom = c.req.header('Last-Event-ID');
  c.header('Cache-Control', 'no-store');
  return streamSSE(
    c,
    async (stream) => {
      let cursor = resumeFrom && ENTRY_ID.test(resumeFrom) ? resumeFrom : null;
      let aborted = false;
      stream.onAbort(() => {
        aborted = true;
      });
      if (!isLive(execution)) {
        if (execution.output && cursor === null) await stream.writeSSE({ event: 'output', data: execution.output });
        await stream.writeSSE({ event: 'end', data: JSON.stringify({ status: execution.status }) });
        return;
      }
      const started = Date.now();
      let checkedAt = Date.now();
      let status = execution.status;
      const send = async () => {
        for (const entry of await read(cursor)) {
          await stream.writeSSE({ event: 'output', id: entry.id, data: entry.text });
          cursor = entry.id;
        }
      };
      while (!aborted && Date.now() - started < FOLLOW_MAX_MS) {
        await send();
        if (Date.now() - checkedAt >= STATUS_EVERY_MS) {
          checkedAt = Date.now();
          status = (await deps.store.executionGet(id))?.status ?? status;
          if (!isLive({ status })) {
            await send(); // what the worker wrote out just before the outcome
            await stream.writeSSE({ event: 'end', data: JSON.stringify({ status }) });
            return;
          }
        }
        await stream.sleep(POLL_MS);
      }
    },
    async (error, stream) => {
      deps.logger.warn({ event: 'api.output_stream_failed', execution_id: id, err: String(error) });
      await stream.writeSSE({
        event: 'error',
        data: JSON.stringify({ message: 'the output stream failed; reconnect to resume' }),
      });
    },
  );
}

export function outputRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/executions/{id}/output',
      operationId: 'getExecutionOutput',
      middleware: [needs('read')] as const,
      tags: ['executions'],
      summary:
        "An execution's output as text (a running one: what it printed so far); ?follow=true streams it as server-sent events",
      request: { params: IdParams, query: OutputQuery },
      responses: {
        200: {
          description: 'The output (text/plain, with X-Execution-Status), or with follow=true an event stream',
          content: { 'text/plain': { schema: z.string() }, 'text/event-stream': { schema: z.string() } },
        },
        ...errorResponses,
        404: notFoundResponse,
      },
    }),
    // The handler answers text or an event stream, which the route's typed JSON responses cannot describe.
    (async (c: Context) => outputResponse(c, deps, c.req.param('id')!, c.req.query('follow') === 'true')) as never,
  );
}
