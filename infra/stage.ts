/** Stage policy inside infra: the committed settings of the stage being deployed (infra/settings.ts). */
import { stageSettings } from './settings';

/** Same list as `protect` in sst.config.ts; these stages also get deletion protection and a final snapshot. */
export const isProduction = ['production'].includes($app.stage);

/** This stage's committed settings. */
export const settings = stageSettings($app.stage);

/** Where this stage's queue lives; a deploy that would move it is refused (infra/preflight.ts). */
export const queueBackend = settings.queue;
