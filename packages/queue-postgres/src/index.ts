/** @module @jobs/queue-postgres — PostgreSQL delivery: the queue ports on tables and functions (migration 009). */
export { createPostgresQueue, type PostgresQueue, type PostgresQueueOptions } from './queue';
export { createPostgresLiveOutput, postgresLiveOutputReader } from './live-output';
