/** @module deps — what the API needs from the outside; functions/ builds it once per process from Context + Config. */
import type { Clock, Logger, TransitionSink } from '@jobs/core';
import type { Queue } from '@jobs/queue';
import type { Store } from '@jobs/store';

export interface ApiDeps {
  store: Store;
  queue: Queue;
  clock: Clock;
  sink: TransitionSink;
  logger: Logger;
  /** Bearer keys accepted on /api/v1; empty: the API is open (local development only, loopback requests only). */
  apiKeys: string[];
  /** A bearer token GET /metrics accepts besides the API keys (METRICS_TOKEN), for scrapers. */
  metricsToken?: string;
  /** Host names served besides loopback ones, when keys are set (`*`: any); see host-guard.ts. */
  allowedHosts?: string[];
  /** False: command jobs are refused at create (COMMAND_JOBS=off). Default true. */
  commandJobs?: boolean;
  /** Larger request bodies get a 413. */
  bodyLimitBytes: number;
  /** Jobs with a longer timeout default to the long lane, and may not ask for the short one. */
  shortLaneMaxTimeoutMs: number;
  /** GET /workers lists workers that heartbeated within this window. */
  workerActiveWithinMs: number;
  /** Each /healthz probe gives up after this long (default 2000 ms). */
  healthTimeoutMs?: number;
}

/**
 * Hono environment of every route: the request id set by the request-log middleware, and the actor (who makes the
 * request, recorded in job versions) set by the auth middleware: "api" for every key today; a key's name once keys
 * have names.
 */
export interface ApiEnv {
  Variables: { requestId: string; actor: string };
}
