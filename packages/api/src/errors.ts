/**
 * @module errors — the one JSON error shape, and the mapping from core errors, validation failures and Hono's
 * HTTP exceptions to it. Anything unexpected becomes a 500 that is logged but never shown to the caller.
 */
import {
  clip,
  ConflictError,
  IdempotencyMismatchError,
  InvalidInputError,
  NotFoundError,
  type Logger,
} from '@jobs/core';
import type { Context, ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';
import type { ApiEnv } from './deps';

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: { code: string; message: string; details?: ErrorDetail[] };
}

/** A failure with a status the caller deserves to see; thrown by handlers and middleware, rendered by onError. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export function errorBody(code: string, message: string, details?: ErrorDetail[]): ErrorBody {
  return { error: details && details.length > 0 ? { code, message, details } : { code, message } };
}

/** A 400 listing every problem; the message repeats them so a human reading only `message` still sees them. */
export function validationFailed(details: ErrorDetail[]): ApiError {
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  return new ApiError(400, 'validation_failed', `invalid request: ${summary}`, details);
}

/** Zod issues as `{ path, message }`; `where` names the part of the request for issues about the whole of it. */
export function zodDetails(error: ZodError, where: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) details.push({ path: path ? `${path}.${key}` : key, message: 'unknown field' });
      continue;
    }
    const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
    details.push({ path: path || where, message: missing ? 'is required' : issue.message });
  }
  return details;
}

/** The validation hook of every route: a failed parse of body, query, params or headers is a 400. */
export function validationHook(result: { success: boolean; error?: ZodError; target: string }): void {
  if (!result.success && result.error) {
    throw validationFailed(zodDetails(result.error, result.target === 'json' ? 'body' : result.target));
  }
}

const HTTP_CODES: Record<number, [code: string, message: string]> = {
  400: ['bad_request', 'bad request'],
  401: ['unauthorized', 'authentication required'],
  404: ['not_found', 'not found'],
  405: ['method_not_allowed', 'method not allowed'],
  413: ['payload_too_large', 'request body too large'],
  415: ['unsupported_media_type', 'Content-Type must be application/json'],
};

function fromHttpException(error: HTTPException): ApiError {
  if (error.status === 400 && /malformed json/i.test(error.message)) {
    return new ApiError(400, 'invalid_json', 'request body is not valid JSON');
  }
  const [code, message] = HTTP_CODES[error.status] ?? ['error', error.message || 'request failed'];
  return new ApiError(
    error.status as ContentfulStatusCode,
    code,
    error.status === 415 ? message : error.message || message,
  );
}

/** Maps what a handler threw to a JSON error response. */
export function toApiError(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error instanceof NotFoundError) return new ApiError(404, 'not_found', error.message);
  if (error instanceof ConflictError) return new ApiError(409, 'conflict', error.message);
  if (error instanceof IdempotencyMismatchError) return new ApiError(422, 'idempotency_mismatch', error.message);
  if (error instanceof InvalidInputError) {
    return validationFailed([{ path: error.field ?? 'body', message: error.message }]);
  }
  if (error instanceof HTTPException) return fromHttpException(error);
  if (isClientAbort(error))
    return new ApiError(400, 'client_closed_request', 'the client closed the connection before the request was read');
  return null;
}

/**
 * Node's request stream fails with "aborted" (ECONNRESET) when the client goes away mid-body: nobody reads the
 * answer, and it is not a server bug, so it must not be logged or counted as a 500.
 */
function isClientAbort(error: unknown): boolean {
  return error instanceof Error && error.message === 'aborted' && (error as { code?: string }).code === 'ECONNRESET';
}

function renderError(c: Context, error: ApiError): Response {
  return c.json(errorBody(error.code, error.message, error.details), error.status, error.headers);
}

/**
 * PostgreSQL or Redis unreachable, restarting or refusing connections: the request was fine, the service is not.
 * pg: class 08 (connection exception) and 57P (shutdown, crash recovery); node: connection refused/reset/timeouts;
 * ioredis: its own "Connection is closed" / retries-exhausted errors.
 */
function isUnavailable(error: unknown): boolean {
  const code = String((error as { code?: unknown }).code ?? '');
  if (
    code.startsWith('08') ||
    code.startsWith('57P') ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code)
  ) {
    return true;
  }
  const text = `${(error as Error).name ?? ''} ${(error as Error).message ?? ''}`;
  return /Connection terminated|connection timeout|Connection is closed|MaxRetriesPerRequestError|Query read timeout|database system is (starting up|shutting down)/i.test(
    text,
  );
}

export function onError(logger: Logger): ErrorHandler<ApiEnv> {
  return (error, c) => {
    const known = toApiError(error);
    if (known) return renderError(c, known);
    if (isUnavailable(error)) {
      logger.warn({
        event: 'http.unavailable',
        request_id: c.get('requestId'),
        path: clip(c.req.path),
        err: error.message,
      });
      return c.json(
        errorBody(
          'unavailable',
          'the database or the queue is unreachable; retry shortly (a trigger with the same Idempotency-Key cannot run twice)',
        ),
        503,
        { 'Retry-After': '1' },
      );
    }
    // Name, message and stack only: never the request (headers may carry the API key).
    logger.error({
      event: 'http.unhandled_error',
      request_id: c.get('requestId'),
      method: c.req.method,
      path: clip(c.req.path),
      err: { name: error.name, message: error.message, stack: error.stack },
    });
    return c.json(
      errorBody('internal', `internal error (request id ${c.get('requestId')}); details are in the server log`),
      500,
    );
  };
}
