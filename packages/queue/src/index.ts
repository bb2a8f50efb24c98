/** @module @jobs/queue — Redis delivery: key builder, Lua scripts, leases, delayed set, dead-letter list. */
export { createQueue, type Queue, type QueueOptions, type RedisClient } from './queue';
export { queueKeys, DEFAULT_PREFIX, type LaneKeys, type QueueKeys } from './keys';
export { createLiveOutput, liveOutputReader } from './live-output';
