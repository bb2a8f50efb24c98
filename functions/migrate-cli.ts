/** `npm run migrate`: applies pending migrations to DATABASE_URL and exits. */
import { createContext } from './context';
import { exitOnStartError } from './process';

async function main() {
  const ctx = await createContext({ migrate: true });
  await ctx.close();
}

main().catch(exitOnStartError);
