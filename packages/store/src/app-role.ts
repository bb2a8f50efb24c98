/**
 * @module app-role — the least-privilege role the runtimes connect as. The migration step (connected as the owner
 * of the schema, on RDS the master user) creates or updates it after every migration run: it may read and write the
 * rows of every table, use the sequences and call the functions of the schema, and nothing else. It owns nothing,
 * so it can neither create, alter nor drop a table; the migrations keep the owner.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import type pg from 'pg';
import { inTransaction, withClient } from './transaction';

export interface AppRole {
  /** A plain PostgreSQL identifier (lower case, digits, underscores), not the connected user. */
  name: string;
  /** What the runtimes log in with: 12-200 printable ASCII characters, no whitespace. */
  password: string;
}

/** Attributes that would give the role more than DML; a role that already exists with one of them is refused. */
const POWERS = ['rolsuper', 'rolcreaterole', 'rolcreatedb', 'rolreplication', 'rolbypassrls'] as const;

/** Problems with `role` as an application role, for a message (empty: fine). */
function appRoleProblems(role: Partial<AppRole>): string[] {
  const problems: string[] = [];
  if (!role.name || !/^[a-z_][a-z0-9_]{0,62}$/.test(role.name))
    problems.push('the application role must be a lower-case PostgreSQL identifier of at most 63 characters');
  if (!role.password || !/^[\x21-\x7e]{12,200}$/.test(role.password))
    problems.push("the application role's password must be 12-200 printable ASCII characters without whitespace");
  return problems;
}

/**
 * Creates `role` or brings it up to date in the schema the pool's connections use: LOGIN with `password`, USAGE on
 * the schema, SELECT/INSERT/UPDATE/DELETE on its tables, USAGE/SELECT on its sequences, EXECUTE on its functions,
 * and the same on what this user creates there later. Run after `migrate`, as the owner of the schema.
 * @example await grantAppRole(pool, { name: 'jobs_app', password })  // { created: true }
 */
export async function grantAppRole(pool: pg.Pool, role: AppRole): Promise<{ created: boolean }> {
  const problems = appRoleProblems(role);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return withClient(pool, (client) =>
    inTransaction(client, async () => {
      // Roles belong to the whole server: two deploys of one stage must not both create it.
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('jobs-scheduler-app-role:' || $1))`, [role.name]);
      const { rows } = await client.query<{ me: string; schema: string | null; owns: boolean | null }>(
        `SELECT current_user AS me, current_schema() AS schema,
                (SELECT pg_has_role(n.nspowner, 'USAGE') FROM pg_namespace n WHERE n.nspname = current_schema()) AS owns`,
      );
      const { me, schema, owns } = rows[0]!;
      if (role.name === me) throw new Error(`the application role must not be the user the migrations run as (${me})`);
      if (schema === null) throw new Error('the connection has no current schema (search_path names none that exists)');
      const existing = await client.query<Record<(typeof POWERS)[number], boolean>>(
        `SELECT ${POWERS.join(', ')} FROM pg_roles WHERE rolname = $1`,
        [role.name],
      );
      const powers = existing.rows[0] ? POWERS.filter((p) => existing.rows[0]![p]) : [];
      if (powers.length > 0)
        throw new Error(
          `role ${role.name} exists with ${powers.join(', ')}; the application role may have none of them (drop it, or name another)`,
        );
      const name = client.escapeIdentifier(role.name);
      const on = client.escapeIdentifier(schema);
      // Hashed here: the statement carries the SCRAM verifier, so no server log of it can show the password.
      const password = client.escapeLiteral(scramVerifier(role.password));
      await client.query(
        existing.rows[0]
          ? `ALTER ROLE ${name} LOGIN PASSWORD ${password}`
          : `CREATE ROLE ${name} LOGIN PASSWORD ${password}`,
      );
      // Before PostgreSQL 15 everyone may create objects in `public`; only the schema's owner can take that back.
      if (owns) await client.query(`REVOKE CREATE ON SCHEMA ${on} FROM PUBLIC`);
      const grants = [
        `GRANT USAGE ON SCHEMA ${on} TO ${name}`,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${on} TO ${name}`,
        `REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA ${on} FROM ${name}`,
        `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${on} TO ${name}`,
        `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${on} TO ${name}`,
        // A migration run without this step (npm run migrate) still leaves the role able to use what it adds.
        `ALTER DEFAULT PRIVILEGES IN SCHEMA ${on} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${name}`,
        `ALTER DEFAULT PRIVILEGES IN SCHEMA ${on} GRANT USAGE, SELECT ON SEQUENCES TO ${name}`,
        `ALTER DEFAULT PRIVILEGES IN SCHEMA ${on} GRANT EXECUTE ON FUNCTIONS TO ${name}`,
      ];
      for (const sql of grants) await client.query(sql);
      return { created: !existing.rows[0] };
    }),
  );
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802, RFC 7677), in its `rolpassword` format.
 * PostgreSQL takes a verifier given as the password as is. `password` is ASCII (appRoleProblems), which SASLprep
 * leaves unchanged.
 */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest('base64');
  const serverKey = createHmac('sha256', salted).update('Server Key').digest('base64');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey}:${serverKey}`;
}
