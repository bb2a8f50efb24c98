/**
 * @module schemas/targets — the `http` and `lambda` job targets as the API takes and shows them. Header values that
 * look like secrets are stored but always shown masked (maskHeaders in @jobs/core).
 */
import { z } from '@hono/zod-openapi';
import { HTTP_METHODS, RESERVED_HEADERS } from '@jobs/core';

const MAX_URL_CHARS = 2048;
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE_CHARS = 8192;
const MAX_HTTP_BODY_BYTES = 64 * 1024;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** A name, a partial ARN or a full ARN (AWS's own pattern, qualifier suffix included). */
const LAMBDA_FUNCTION =
  /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?$/;
const LAMBDA_QUALIFIER = /^(\$LATEST|[a-zA-Z0-9-_]{1,128})$/;

/** Why a header named `__proto__` is refused: as an object key it would be dropped, not stored. */
const PROTO_HEADER = '__proto__ is not taken as a header name (as a JSON object key it would be lost)';

/**
 * Refuses an own `__proto__` key (JSON.parse makes one): a record's parse skips it, so the header would vanish and
 * the job be created without it. Checked on the input, before the record drops it.
 */
function refuseProtoKey(value: unknown, ctx: z.RefinementCtx): unknown {
  if (value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, '__proto__'))
    ctx.addIssue({ code: 'custom', path: ['__proto__'], message: PROTO_HEADER });
  return value;
}

function urlProblem(text: string): string | null {
  if (!/^[\x21-\x7e]*$/.test(text)) return 'must be printable ASCII without spaces (percent-encode anything else)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL such as https://api.example.com/hooks/nightly';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http: or https: URL';
  if (url.username || url.password)
    return 'must not carry credentials (user:password@); put them in a header such as Authorization';
  return null;
}

export const HttpTargetInput = z
  .strictObject({
    url: z
      .string()
      .max(MAX_URL_CHARS)
      .superRefine((url, ctx) => {
        const problem = urlProblem(url);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .openapi({ example: 'https://api.example.com/hooks/nightly' }),
    method: z.enum(HTTP_METHODS).default('POST'),
    headers: z.preprocess(
      refuseProtoKey,
      z
        .record(
          z
            .string()
            .regex(
              HEADER_NAME,
              "header names are tokens (letters, digits and !#$%&'*+.^_`|~-), at most 100 characters",
            ),
          z
            .string()
            .max(MAX_HEADER_VALUE_CHARS)
            .regex(/^[\t\x20-\x7e]*$/, 'header values must be printable ASCII (no CR, LF or NUL)'),
        )
        .default({})
        .superRefine((headers, ctx) => {
          const names = Object.keys(headers);
          if (names.length > MAX_HEADERS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_HEADERS} headers` });
          const lower = names.map((n) => n.toLowerCase());
          for (const name of names) {
            if (RESERVED_HEADERS.includes(name.toLowerCase())) {
              ctx.addIssue({
                code: 'custom',
                path: [name],
                message: `${name} is set by the scheduler on every request`,
              });
            } else if (lower.indexOf(name.toLowerCase()) !== lower.lastIndexOf(name.toLowerCase())) {
              ctx.addIssue({
                code: 'custom',
                path: [name],
                message: 'header names are case-insensitive: give each once',
              });
            }
          }
        })
        .openapi({
          description:
            'Sent with every request. Values of secret-looking names (authorization, *-key, *token*, cookie) are stored and shown masked.',
        }),
    ),
    body: z
      .unknown()
      .optional()
      .superRefine((body, ctx) => {
        if (body === undefined) return;
        const bytes = Buffer.byteLength(typeof body === 'string' ? body : (JSON.stringify(body) ?? ''), 'utf8');
        if (bytes > MAX_HTTP_BODY_BYTES)
          ctx.addIssue({ code: 'custom', message: `is ${bytes} bytes; the limit is ${MAX_HTTP_BODY_BYTES} (64 KiB)` });
      })
      .openapi({
        description:
          "A string is sent as is (text/plain), anything else as JSON. Default: the execution's payload as JSON. GET sends no body.",
      }),
  })
  .openapi('HttpTarget');

export const LambdaTargetInput = z
  .strictObject({
    function: z
      .string()
      .min(1)
      .max(170)
      .regex(LAMBDA_FUNCTION, 'must be a Lambda function name or ARN')
      .openapi({ example: 'billing-close' }),
    qualifier: z
      .string()
      .regex(LAMBDA_QUALIFIER, 'must be a version or an alias name')
      .nullish()
      .openapi({ example: 'live' }),
  })
  .openapi('LambdaTarget');

export const HttpTargetJson = z
  .object({
    url: z.string(),
    method: z.enum(HTTP_METHODS),
    headers: z.record(z.string(), z.string()),
    body: z.unknown().optional(),
  })
  .openapi('HttpTargetOut');

export const LambdaTargetJson = z
  .object({ function: z.string(), qualifier: z.string().nullable() })
  .openapi('LambdaTargetOut');
