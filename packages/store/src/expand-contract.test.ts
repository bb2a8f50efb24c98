/**
 * The expand/contract rule (docs/design.md, "Migrations"): old workers run against the new schema until their release
 * drains, so a migration from EXPAND_CONTRACT_FROM on may only expand, unless it is marked as a contract step.
 */
import { describe, expect, it } from 'vitest';
import { EXPAND_CONTRACT_FROM, expandContractProblems } from './expand-contract';
import { migrations } from './migrate';

describe('expandContractProblems', () => {
  it.each([
    ['ALTER TABLE jobs DROP COLUMN payload;', /drops a column/],
    ['ALTER TABLE jobs DROP COLUMN IF EXISTS payload, ADD COLUMN y int;', /drops a column/],
    ['DROP TABLE live_output;', /drops a table/],
    ['DROP FUNCTION queue_push(bigint[]);', /drops a table, view, function/],
    ['ALTER TABLE jobs RENAME COLUMN payload TO body;', /renames/],
    ['ALTER TABLE jobs RENAME TO tasks;', /renames/],
    ['ALTER TABLE jobs ALTER COLUMN priority TYPE bigint;', /type/],
    ['ALTER TABLE jobs ALTER COLUMN priority SET DATA TYPE bigint;', /type/],
    ['ALTER TABLE jobs ALTER COLUMN command SET NOT NULL;', /NOT NULL/],
    ['ALTER TABLE jobs ALTER COLUMN priority DROP DEFAULT;', /default/],
    ['ALTER TABLE jobs ADD COLUMN owner text NOT NULL;', /NOT NULL column without a default/],
    ['ALTER TABLE jobs ADD COLUMN a int, ADD COLUMN owner text NOT NULL;', /NOT NULL column without a default/],
  ])('refuses %s', (sql, problem) => {
    expect(expandContractProblems(sql).join('\n')).toMatch(problem);
  });

  it.each([
    'CREATE TABLE releases (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, release text NOT NULL);',
    'ALTER TABLE workers ADD COLUMN release text;',
    "ALTER TABLE jobs ADD COLUMN owner text NOT NULL DEFAULT 'nobody';",
    'ALTER TABLE jobs ADD COLUMN n int NOT NULL GENERATED ALWAYS AS (priority + 1) STORED;',
    'CREATE INDEX jobs_owner ON jobs (owner);',
    "CREATE OR REPLACE FUNCTION f() RETURNS text LANGUAGE sql AS $$ SELECT 'DROP TABLE x' $$;",
    '-- we never DROP COLUMN here\nALTER TABLE jobs DROP CONSTRAINT jobs_x;',
  ])('accepts %s', (sql) => {
    expect(expandContractProblems(sql)).toEqual([]);
  });

  it('accepts anything in a migration marked as a contract step, with its reason', () => {
    const sql = 'ALTER TABLE jobs DROP COLUMN payload;';
    expect(expandContractProblems(`-- contract: no release since 0.3 reads payload\n${sql}`)).toEqual([]);
    // A bare marker without a reason does not count.
    expect(expandContractProblems(`-- contract:\n${sql}`)).not.toEqual([]);
  });
});

it(`holds for every bundled migration from ${EXPAND_CONTRACT_FROM} on`, () => {
  const checked = migrations().filter((m) => m.version >= EXPAND_CONTRACT_FROM);
  expect(checked.length).toBeGreaterThan(0);
  for (const m of checked) expect(expandContractProblems(m.sql), `${m.version}_${m.name}`).toEqual([]);
});
