/** @module client — the Redis connection the adapter takes, and its Lua scripts as typed commands (see queue.ts). */
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

type Script<T> = (...args: (string | number)[]) => Promise<T>;
export interface ScriptClient {
  push: Script<number>;
  claim: Script<string[]>;
  heartbeat: Script<string[]>;
  settle: Script<number>;
  reap: Script<string[]>;
  withdraw: Script<number>;
  rebuild: Script<number>;
  inspect: Script<unknown[]>;
}

/** The scripts on a pipeline: each call only queues the command; exec() sends them and gives every reply. */
export type ScriptPipeline = { [K in keyof ScriptClient]: (...args: (string | number)[]) => unknown } & {
  exec(): Promise<[Error | null, unknown][] | null>;
};
