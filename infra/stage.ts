/** Stage policy inside infra: which stages get production-grade data settings. */

/** Same list as `protect` in sst.config.ts; these stages also get the RDS proxy and deletion protection. */
export const isProduction = ['production'].includes($app.stage);
