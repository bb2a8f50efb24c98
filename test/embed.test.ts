import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { render, targets } from './support/embed';
import { ROOT } from './support/processes';

it.each(targets)('$out is up to date with $dir (run `npm run gen`)', (target) => {
  expect(readFileSync(join(ROOT, target.out), 'utf8')).toBe(render(target));
});
