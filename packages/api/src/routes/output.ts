/**
 * @module routes/output — GET /executions/{id}/output: what an attempt printed, as text; for a running attempt, what
 * it has printed so far (the worker's live buffer in Redis, see packages/queue/src/live-output.ts), and with
 * `?follow=true` a stream of server-sent events until the attempt ends. The dashboard's execution page follows the
 * same stream (`outputResponse`, mounted there behind its session).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { InvalidInputError, LIVE_STATUSES, NotFoundError, completeUtf8End, type Execution } from '@jobs/core';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { IdParams, errorResponses, notFoundResponse } from '../schemas/common';

/** How often a follower looks for new output, and for the attempt's end. */
const POLL_MS = 250;
const STATUS_EVERY_MS = 1000;
/** A follow stream ends after this long by default; EventSource reconnects with Last-Event-ID and resumes. */
const FOLLOW_MAX_MS = 10 * 60_000;
/** The `retry:` hint of a follow stream that ends while the attempt runs. */
const FOLLOW_RETRY_MS = 2000;
/** The hint when a response ended at its byte cap with more already there. */
const FOLLOW_MORE_RETRY_MS = 100;
const ENTRY_ID = /^\d{1,20}-\d{1,20}$/;
const OFFSET = /^\d{1,12}$/;

/**
 * Most bytes of output one response without follow carries (the body; a Lambda response must stay under 6 MB once
 * JSON-escaped, which can make a control character six bytes): more is read with the cursor it answers.
 */
export const OUTPUT_PAGE_BYTES = 512 * 1024;

const isLive = (e: Pick<Execution, 'status'>) => (LIVE_STATUSES as readonly string[]).includes(e.status);

const OutputQuery = z.object({
  follow: z
    .enum(['true', 'false'])
    .optional()
    .openapi({
      param: { name: 'follow', in: 'query' },
      description: 'true: server-sent events (`output`, then `end`) until the attempt ends.',
    }),
  cursor: z
    .string()
    .regex(/^(\d{1,20}-\d{1,20}|\d{1,12})$/, 'a cursor from X-Output-Cursor (or an output event id)')
    .optional()
    .openapi({
      param: { name: 'cursor', in: 'query' },
      description:
        'Where to go on from: the `X-Output-Cursor` of the previous page (without follow), or the id of the last ' +
        '`output` event received (with follow; the `Last-Event-ID` header takes precedence). A cursor from before ' +
        'the attempt ended, or from another attempt, starts again from the beginning of what there is now.',
    }),
});

/** The SSE bytes of one event (the `data:` prefix repeats on every line). */
const sseBytes = (text: string, id?: string) =>
  Buffer.byteLength(text) + 7 * (text.split('\n').length + 1) + (id ? id.length + 4 : 0);

/** One page of the final output from byte `offset`: at most `max` bytes, never cutting a character. */
function finalPage(output: string, offset: number, max: number) {
  const bytes = Buffer.from(output, 'utf8');
  const start = Math.min(offset, bytes.length);
  const slice = bytes.subarray(start, Math.min(bytes.length, start + max));
  const end = start + (start + max < bytes.length ? completeUtf8End(slice) : slice.length);
  return { text: bytes.subarray(start, end).toString('utf8'), cursor: String(end), more: end < bytes.length };
}

/**
 * The output of execution `id` as text, or (follow) as server-sent events: `output` events carry text (their id is
 * a cursor: a reconnect with Last-Event-ID resumes after it), and one `end` event with `{"status": ...}` closes the
 * stream once the attempt is final (its whole output is then GET without follow). Without follow the text comes in
 * pages of at most OUTPUT_PAGE_BYTES: `X-Output-Cursor` says where a page ends, `X-Output-More: true` that more
 * follows already (ask again with `cursor`).
 */
export async function outputResponse(
  c: Context,
  deps: Pick<ApiDeps, 'store' | 'liveOutput' | 'logger' | 'outputFollow'>,
  id: string,
  follow: boolean,
): Promise<Response> {
  const execution = await deps.store.executionGet(id);
  if (!execution) throw new NotFoundError('execution', id);
  const read = (after: string | null) => deps.liveOutput?.read(id, after) ?? Promise.resolve([]);
  const given = c.req.query('cursor');
  if (given !== undefined && !ENTRY_ID.test(given) && !OFFSET.test(given)) {
    throw new InvalidInputError('cursor: a cursor from X-Output-Cursor (or an output event id)');
  }
  if (!follow) {
    let page: { text: string; cursor: string; more: boolean };
    if (isLive(execution)) {
      const after = given && ENTRY_ID.test(given) ? given : null;
      const entries = await read(after);
      let text = '';
      let bytes = 0;
      let cursor = after ?? '';
      let taken = 0;
      for (const entry of entries) {
        const size = Buffer.byteLength(entry.text);
        // At least one entry a page (a write is far below the cap), so a reader always makes progress.
        if (taken > 0 && bytes + size > OUTPUT_PAGE_BYTES) break;
        text += entry.text;
        bytes += size;
        cursor = entry.id;
        taken++;
      }
      page = { text, cursor, more: taken < entries.length || entries.length >= 1000 };
    } else {
      const offset = given && OFFSET.test(given) ? Number(given) : 0;
      page = finalPage(execution.output ?? '', offset, OUTPUT_PAGE_BYTES);
    }
    return c.body(page.text, 200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Execution-Status': execution.status,
      'X-Output-Cursor': page.cursor,
      'X-Output-More': String(page.more),
    });
  }
  const header = c.req.header('Last-Event-ID');
  const resumeFrom = header && ENTRY_ID.test(header) ? header : given && ENTRY_ID.test(given) ? given : null;
  const window = deps.outputFollow ?? { windowMs: FOLLOW_MAX_MS, retryMs: FOLLOW_RETRY_MS, maxBytes: Infinity };
  c.header('Cache-Control', 'no-store');
  return streamSSE(
    c,
    async (stream) => {
      let cursor = resumeFrom;
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
      let checkedAt = 0;
      let status = execution.status;
      let sent = 0;
      /** Sends what is new; false when the response's byte cap cut it short (more is already there). */
      const send = async () => {
        for (const entry of await read(cursor)) {
          const size = sseBytes(entry.text, entry.id);
          if (sent > 0 && sent + size > window.maxBytes) return false;
          await stream.writeSSE({ event: 'output', id: entry.id, data: entry.text });
          cursor = entry.id;
          sent += size;
        }
        return true;
      };
      /** Ends this response while the attempt runs: the client reconnects after the hint, from the last id. */
      const pause = (retryMs: number) =>
        stream.writeSSE({ event: 'resume', data: JSON.stringify({ retry_ms: retryMs }), retry: retryMs });
      for (;;) {
        if (aborted) return;
        if (!(await send())) return pause(FOLLOW_MORE_RETRY_MS);
        if (Date.now() - checkedAt >= STATUS_EVERY_MS) {
          checkedAt = Date.now();
          status = (await deps.store.executionGet(id))?.status ?? status;
          if (!isLive({ status })) {
            // What the worker wrote out just before the outcome.
            if (!(await send())) return pause(FOLLOW_MORE_RETRY_MS);
            await stream.writeSSE({ event: 'end', data: JSON.stringify({ status }) });
            return;
          }
        }
        if (Date.now() - started >= window.windowMs) return pause(window.retryMs);
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
          description:
            'The output as text (X-Execution-Status), in pages of at most 512 KiB (X-Output-Cursor, X-Output-More); ' +
            'with follow=true an event stream: `output` events, `end`, or on Lambda `resume` with a `retry:` hint ' +
            '(reconnect with Last-Event-ID)',
          headers: {
            'X-Execution-Status': { schema: { type: 'string' }, description: "The execution's status" },
            'X-Output-Cursor': {
              schema: { type: 'string' },
              description: 'Where this page ends: `cursor` for the next one (without follow)',
            },
            'X-Output-More': {
              schema: { type: 'string', enum: ['true', 'false'] },
              description: 'true when more output follows this page already (without follow)',
            },
          },
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
