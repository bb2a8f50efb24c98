import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { render, targets } from '../scripts/embed';
import { OPENAPI_OUT, TYPES_OUT, renderClientTypes, renderOpenApi } from '../scripts/openapi-client';
import { ROOT } from './support/processes';

it.each(targets)('$out is up to date with $dir (run `npm run gen`)', (target) => {
  expect(readFileSync(join(ROOT, target.out), 'utf8')).toBe(render(target));
});

it(`${OPENAPI_OUT} and ${TYPES_OUT} are up to date with the API (run \`npm run gen\`)`, async () => {
  const document = await renderOpenApi();
  expect(readFileSync(join(ROOT, OPENAPI_OUT), 'utf8')).toBe(document);
  expect(readFileSync(join(ROOT, TYPES_OUT), 'utf8')).toBe(await renderClientTypes(document));
});
