/** @module @jobs/queue — Redis delivery: key builder, Lua scripts, leases, delayed set, dead-letter list. */
export { createQueue, type Queue, type RedisClient } from './queue';
export { queueKeys } from './keys';
export { createLiveOutput, liveOutputReader } from './live-output';
