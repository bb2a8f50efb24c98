/** @module routes/bodies — request bodies shared by routes: the OpenAPI body shape, and an empty JSON body read as `{}`. */
import type { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';

export const jsonBody = <T extends z.ZodType>(schema: T, required: boolean) => ({
  required,
  content: { 'application/json': { schema } },
});

/** An empty body with a JSON Content-Type counts as `{}` (curl -X POST -H 'Content-Type: application/json'). */
export const emptyBodyIsEmptyObject: MiddlewareHandler = async (c, next) => {
  const type = c.req.header('content-type') ?? '';
  if (/^application\/json\b/i.test(type)) {
    // Read once into Hono's body cache (the validator's json() parses the cached text), never clone the request.
    const text = await c.req.text();
    if (text.trim() === '') (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve('{}');
  }
  await next();
};
