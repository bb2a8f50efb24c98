/**
 * `npm run migrate`: applies pending migrations to DATABASE_URL, creates or updates DATABASE_APP_ROLE (when set),
 * records RELEASE_ID (when set), re-encrypts job secrets sealed under a key older than SECRETS_KEY, and exits.
 */
import { grantAppRole, recordRelease, secretsRotate } from '@jobs/store';
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
    // A rotation: SECRETS_KEY is the new key, SECRETS_KEY_PREVIOUS the old one until this has run.
    if (ctx.config.secretsKeyring) {
      const rotated = await secretsRotate(ctx.pool, ctx.config.secretsKeyring);
      ctx.logger.info({ event: 'secrets.rotated', count: rotated });
    }
  } finally {
    await ctx.close();
  }
}

main().catch(exitOnStartError);
