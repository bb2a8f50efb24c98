/**
 * docs/reference/rest.md is generated from the OpenAPI document (scripts/rest-docs.ts, run by `npm run gen`): it
 * must match the checked-in document byte for byte, and cover every operation of it. test/embed.test.ts checks that
 * the document itself matches the API.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REST_DOCS_OUT, REST_DOCS_SOURCE, renderRestDocs } from '../scripts/rest-docs';
import { ROOT } from './support/processes';

const document = readFileSync(join(ROOT, REST_DOCS_SOURCE), 'utf8');

it(`${REST_DOCS_OUT} is up to date with ${REST_DOCS_SOURCE} (run \`npm run gen\`)`, () => {
  expect(readFileSync(join(ROOT, REST_DOCS_OUT), 'utf8')).toBe(renderRestDocs(document));
});

it('lists every operation with its method, path and responses, and every schema', () => {
  const reference = renderRestDocs(document);
  const parsed = JSON.parse(document) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, unknown> };
  };
  for (const [path, item] of Object.entries(parsed.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const section = reference.split(`### \`${method.toUpperCase()} ${path}\``)[1]?.split('\n### ')[0];
      expect(section, `${method} ${path}`).toBeDefined();
      for (const status of Object.keys(operation.responses)) expect(section).toContain(`\n| ${status} | `);
    }
  }
  for (const name of Object.keys(parsed.components.schemas)) expect(reference).toContain(`\n### ${name}\n`);
});
