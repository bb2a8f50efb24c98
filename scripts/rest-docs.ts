/**
 * Renders the REST reference (docs/reference/rest.md) from the OpenAPI document (packages/client/openapi.json): every
 * operation with its method, path, authentication, parameters, request body and responses, then every schema with its
 * fields. The document is the one source: routes and fields are described in the zod/OpenAPI schemas, never twice.
 * `npm run gen` writes it after the document; test/rest-docs.test.ts fails when it is stale.
 *
 * @example renderRestDocs(readFileSync('packages/client/openapi.json', 'utf8'))
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REST_DOCS_OUT = 'docs/reference/rest.md';
export const REST_DOCS_SOURCE = 'packages/client/openapi.json';

/** The part of JSON Schema the document uses. */
interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  description?: string;
  default?: unknown;
  example?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface Content {
  [mediaType: string]: { schema?: Schema };
}

interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Content };
  responses?: Record<string, { description?: string; content?: Content }>;
  /** The role the route needs, when the document states it. */
  'x-required-role'?: string;
}

interface Document {
  info: { title: string; version: string; description?: string };
  servers?: { url: string; description?: string }[];
  security?: Record<string, string[]>[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: {
    schemas?: Record<string, Schema>;
    securitySchemes?: Record<string, { type: string; scheme?: string; description?: string }>;
  };
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];

/**
 * Wraps a paragraph (or a list item, continued under `indent`) at `width` characters, never inside a code span, so
 * the reference keeps the docs' line length.
 */
function wrap(text: string, indent = '', width = 120): string[] {
  const lead = /^\s*/.exec(text)![0];
  const words: string[] = [];
  for (const word of text.replace(/\s+/g, ' ').trim().split(' ')) {
    const last = words.length - 1;
    const open = last >= 0 && (words[last]!.match(/`/g) ?? []).length % 2 === 1;
    if (open) words[last] += ` ${word}`;
    else words.push(word);
  }
  const lines: string[] = [];
  let line = '';
  words[0] = lead + (words[0] ?? '');
  for (const word of words) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

function code(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function schemaName(ref: string): string {
  return ref.replace('#/components/schemas/', '');
}

/** The anchor of a schema's heading (`### Job` → `#job`). */
function schemaLink(ref: string): string {
  const name = schemaName(ref);
  return `[${name}](#${name.toLowerCase()})`;
}

/** A schema's type in words: `string or null`, `array of [Job](#job)`, `` `a` \| `b` ``. */
function typeOf(schema: Schema): string {
  if (schema.$ref) return schemaLink(schema.$ref);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.map(typeOf).join(' or ');
  if (schema.allOf) return schema.allOf.map(typeOf).join(' and ');
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (schema.enum) {
    const values = schema.enum.map(code).join(', ');
    return types.includes('null') && !schema.enum.includes(null) ? `one of ${values}, or null` : `one of ${values}`;
  }
  if (types.length === 0) return 'any JSON';
  return types
    .map((t) => {
      if (t === 'array' && schema.items) return `array of ${typeOf(schema.items)}`;
      if (t === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        return `object of ${typeOf(schema.additionalProperties)}`;
      }
      if (t === 'string' && schema.format) return `string (${schema.format})`;
      return t;
    })
    .join(' or ');
}

/** Limits, default, pattern and example, in words. */
function constraints(schema: Schema): string[] {
  const out: string[] = [];
  const range = (min: number | undefined, max: number | undefined, unit: string) => {
    if (min !== undefined && max !== undefined)
      out.push(min < 0 ? `${unit}from ${min} to ${max}` : `${unit}${min}–${max}`);
    else if (min !== undefined) out.push(`${unit}at least ${min}`);
    else if (max !== undefined) out.push(`${unit}at most ${max}`);
  };
  range(schema.minimum, schema.maximum, '');
  range(schema.minLength, schema.maxLength, 'length ');
  range(schema.minItems, schema.maxItems, 'items ');
  if (schema.pattern) out.push(`pattern ${code(schema.pattern)}`);
  if (schema.default !== undefined) out.push(`default ${code(schema.default)}`);
  if (schema.example !== undefined) out.push(`e.g. ${code(schema.example)}`);
  return out;
}

function describe(schema: Schema): string {
  const limits = constraints(schema).join(', ');
  const parts = [schema.description?.trim(), limits.charAt(0).toUpperCase() + limits.slice(1)].filter(
    (p): p is string => Boolean(p),
  );
  return parts.map((p) => (/[.!?:]$/.test(p) ? p : `${p}.`)).join(' ');
}

/** Rows for a schema's fields, nested objects flattened with dots (`http.url`, `keys[].key`). */
function fieldRows(schema: Schema, prefix = ''): string[] {
  if (schema.allOf) return schema.allOf.flatMap((part) => (part.$ref ? [] : fieldRows(part, prefix)));
  const rows: string[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    rows.push(
      `| \`${path}\` | ${cell(typeOf(field))} | ${required.has(name) ? 'yes' : ''} | ${cell(describe(field))} |`,
    );
    if (field.properties) rows.push(...fieldRows(field, `${path}.`));
    else if (field.items?.properties) rows.push(...fieldRows(field.items, `${path}[].`));
  }
  return rows;
}

function fieldTable(schema: Schema): string[] {
  const bases = (schema.allOf ?? []).filter((part) => part.$ref).map((part) => schemaLink(part.$ref!));
  const rows = fieldRows(schema);
  const lines: string[] = [];
  if (bases.length > 0) lines.push(`Every field of ${bases.join(' and ')}, and:`, '');
  if (rows.length > 0) lines.push('| field | type | required | description |', '|---|---|---|---|', ...rows);
  else if (bases.length === 0) lines.push(...wrap(`${typeOf(schema)}. ${describe(schema)}`));
  return lines;
}

function contentLine(content: Content | undefined): string {
  if (!content) return 'no body';
  return Object.entries(content)
    .map(([mediaType, { schema }]) => `${schema ? typeOf(schema) : 'any'} (\`${mediaType}\`)`)
    .join(', or ');
}

function authLine(doc: Document, operation: Operation): string {
  const security = operation.security ?? doc.security ?? [];
  if (security.length === 0) return 'none (open even when API keys are set)';
  const schemes = security
    .flatMap((s) => Object.keys(s))
    .map((name) => {
      const scheme = doc.components?.securitySchemes?.[name];
      return scheme?.scheme === 'bearer' ? 'an API key (`Authorization: Bearer <key>`)' : `\`${name}\``;
    });
  const role = operation['x-required-role'];
  return `${schemes.join(' or ')}${role ? `, role \`${role}\` or above` : ''}`;
}

function operationAnchor(method: string, path: string, operation: Operation): string {
  return operation.operationId ?? `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');
}

function renderOperation(doc: Document, method: string, path: string, operation: Operation): string[] {
  const lines = [
    `<a id="${operationAnchor(method, path, operation)}"></a>`,
    '',
    `### \`${method.toUpperCase()} ${path}\``,
    '',
    ...wrap(`${operation.summary ?? ''}${operation.operationId ? ` (\`${operation.operationId}\`)` : ''}`),
    '',
  ];
  if (operation.description) lines.push(...wrap(operation.description), '');
  lines.push(...wrap(`Authentication: ${authLine(doc, operation)}.`), '');
  if (operation.parameters?.length) {
    lines.push('| parameter | in | type | required | description |', '|---|---|---|---|---|');
    for (const p of operation.parameters) {
      const schema = p.schema ?? {};
      const text = describe({ ...schema, description: p.description ?? schema.description });
      lines.push(`| \`${p.name}\` | ${p.in} | ${cell(typeOf(schema))} | ${p.required ? 'yes' : ''} | ${cell(text)} |`);
    }
    lines.push('');
  }
  if (operation.requestBody) {
    const body = operation.requestBody;
    const optional = body.required ? '' : ' (optional)';
    lines.push(...wrap(`Request body${optional}: ${contentLine(body.content)}.`), '');
  }
  lines.push('| status | meaning | body |', '|---|---|---|');
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    lines.push(`| ${status} | ${cell(response.description ?? '')} | ${cell(contentLine(response.content))} |`);
  }
  lines.push('');
  return lines;
}

export function renderRestDocs(documentText: string): string {
  const doc = JSON.parse(documentText) as Document;
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, operation: item[method]! })),
  );
  const tags = [...(doc.tags ?? [])];
  for (const { operation } of operations) {
    for (const name of operation.tags ?? ['other']) if (!tags.some((t) => t.name === name)) tags.push({ name });
  }
  const lines = [
    `<!-- Generated by scripts/rest-docs.ts from ${REST_DOCS_SOURCE}; run \`npm run gen\`, do not edit. -->`,
    '',
    '# REST reference',
    '',
    ...wrap(`${doc.info.title} ${doc.info.version}. ${doc.info.description ?? ''}`),
    '',
    'Generated from the OpenAPI document the API serves at `GET /api/v1/openapi.json` (checked in as',
    `\`${REST_DOCS_SOURCE}\`). Conventions (JSON in snake_case, ids as strings, errors, pagination, idempotency),`,
    'roles and worked examples are in the [REST API guide](../api.md).',
    '',
  ];
  for (const [name, scheme] of Object.entries(doc.components?.securitySchemes ?? {})) {
    lines.push(...wrap(`Authentication (\`${name}\`): ${scheme.description ?? scheme.scheme ?? scheme.type}`), '');
  }
  lines.push('## Operations', '');
  for (const tag of tags) {
    const ofTag = operations.filter(({ operation }) => (operation.tags ?? ['other']).includes(tag.name));
    if (ofTag.length === 0) continue;
    lines.push(...wrap(`- **${tag.name}**${tag.description ? `: ${tag.description}` : ''}`, '  '));
    for (const { path, method, operation } of ofTag) {
      const anchor = operationAnchor(method, path, operation);
      lines.push(...wrap(`  - [\`${method.toUpperCase()} ${path}\`](#${anchor}): ${operation.summary ?? ''}`, '    '));
    }
  }
  lines.push('');
  for (const tag of tags) {
    const ofTag = operations.filter(({ operation }) => (operation.tags ?? ['other']).includes(tag.name));
    if (ofTag.length === 0) continue;
    lines.push(`## ${tag.name}`, '');
    if (tag.description) lines.push(...wrap(tag.description), '');
    for (const { path, method, operation } of ofTag) lines.push(...renderOperation(doc, method, path, operation));
  }
  lines.push('## Schemas', '');
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    lines.push(`### ${name}`, '');
    if (schema.description) lines.push(...wrap(schema.description), '');
    lines.push(...fieldTable(schema), '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

const root = fileURLToPath(new URL('../', import.meta.url));

/** Writes docs/reference/rest.md from the checked-in document; `npm run gen` calls it after writing the document. */
export function writeRestDocs(): void {
  writeFileSync(join(root, REST_DOCS_OUT), renderRestDocs(readFileSync(join(root, REST_DOCS_SOURCE), 'utf8')));
  console.log(`wrote ${REST_DOCS_OUT}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) writeRestDocs();
