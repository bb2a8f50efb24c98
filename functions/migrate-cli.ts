/**
 * `npm run migrate`: applies pending migrations to DATABASE_URL, creates or updates DATABASE_APP_ROLE (when set),
 * records RELEASE_ID (when set) and exits.
 */
import { grantAppRole, recordRelease } from '@jobs/store';
import { createContext } from './context';
import { exitOnStartError } from './process';

async function main() {
  const ctx = await createContext({ migrate: true });
  try {
    if (ctx.config.databaseAppRole) {
      const { created } = await grantAppRole(ctx.pool, ctx.config.databaseAppRole);
      ctx.logger.info({ event: 'db.app_role_granted', role: ctx.config.databaseAppRole.name, created });
    }
    if (ctx.config.releaseId !== null) {
      const { recorded } = await recordRelease(ctx.pool, ctx.config.releaseId);
      ctx.logger.info({ event: 'db.release_recorded', release: ctx.config.releaseId, new: recorded });
    }
  } finally {
    await ctx.close();
  }
}

main().catch(exitOnStartError);
