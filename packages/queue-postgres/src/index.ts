/** @module @jobs/queue-postgres — PostgreSQL delivery: the queue ports on tables (migration 009) and
 * functions (sql/*.sql, installed by migration 016). */
export { createPostgresQueue } from './queue';
export { createPostgresLiveOutput, postgresLiveOutputReader } from './live-output';
