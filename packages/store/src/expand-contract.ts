/**
 * @module expand-contract — the rule every migration from EXPAND_CONTRACT_FROM on follows (docs/design.md,
 * "Migrations"): a deploy migrates first, and the previous release's workers keep running against the new schema
 * until their release drains. So a migration only expands (new tables, nullable columns or columns with a default,
 * new indexes, new functions); what old code still reads or writes is removed or tightened only in a later release,
 * by a migration marked as a contract step (a line `-- contract: <why no running release uses it>`).
 */

/** The first migration the rule applies to: those before it were written before the rule. */
export const EXPAND_CONTRACT_FROM = 12;

/** The marker of a deliberate contract step, with its reason. */
const CONTRACT_MARKER = /^--[ \t]*contract:[ \t]*\S/m;

const CHECKS: { pattern: RegExp; problem: string }[] = [
  { pattern: /\bDROP\s+COLUMN\b/i, problem: 'drops a column (old code still reads or writes it)' },
  {
    pattern: /\bDROP\s+(TABLE|VIEW|FUNCTION|TYPE|SCHEMA|MATERIALIZED\s+VIEW)\b/i,
    problem: 'drops a table, view, function, type or schema (old code still uses it)',
  },
  { pattern: /\bRENAME\b/i, problem: 'renames something (old code uses the old name)' },
  {
    pattern: /\bALTER\s+COLUMN\s+\w+\s+(SET\s+DATA\s+)?TYPE\b/i,
    problem: "changes a column's type (old code writes the old type, and the rewrite locks the table)",
  },
  {
    pattern: /\bALTER\s+COLUMN\s+\w+\s+SET\s+NOT\s+NULL\b/i,
    problem: 'makes a column NOT NULL (old code inserts rows without it)',
  },
  {
    pattern: /\bDROP\s+DEFAULT\b/i,
    problem: "drops a column's default (old code inserts rows without the column)",
  },
];

/** `ADD COLUMN name type ... NOT NULL` without a DEFAULT in the same clause: old code's inserts would fail. */
const ADD_COLUMN = /\bADD\s+COLUMN\s+(IF\s+NOT\s+EXISTS\s+)?[^,;]*/gi;

/** SQL with comments and string literals blanked, so a word in either never counts. */
function code(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/g, (body) => body.replace(/'[^']*'/g, "''"))
    .replace(/'(?:[^']|'')*'/g, "''");
}

/**
 * What in `sql` breaks the expand/contract rule; empty when nothing does, or when the migration is marked as a
 * contract step.
 * @example expandContractProblems('ALTER TABLE jobs DROP COLUMN x;') // ['drops a column (...)']
 */
export function expandContractProblems(sql: string): string[] {
  if (CONTRACT_MARKER.test(sql)) return [];
  const text = code(sql);
  const problems = CHECKS.filter((c) => c.pattern.test(text)).map((c) => c.problem);
  for (const clause of text.match(ADD_COLUMN) ?? []) {
    if (/\bNOT\s+NULL\b/i.test(clause) && !/\bDEFAULT\b/i.test(clause) && !/\bGENERATED\b/i.test(clause))
      problems.push('adds a NOT NULL column without a default (old code inserts rows without it)');
  }
  return problems;
}
