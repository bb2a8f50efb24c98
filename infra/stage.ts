/** Stage policy inside infra: which stages get production-grade data settings. */

/** Same list as `protect` in sst.config.ts; these stages also get the RDS proxy and deletion protection. */
export const isProduction = ['production'].includes($app.stage);

/**
 * Where the deployed queue lives. `QUEUE_BACKEND=postgres npx sst deploy --stage <stage>` deploys the stage without
 * ElastiCache: every runtime gets QUEUE_BACKEND=postgres and the queue's tables in RDS (README, "Two ways to run the
 * queue"). Set it on every deploy of that stage: a deploy without it adds ElastiCache back and moves the queue there.
 */
export const queueBackend: 'redis' | 'postgres' = process.env.QUEUE_BACKEND === 'postgres' ? 'postgres' : 'redis';
