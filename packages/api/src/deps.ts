/** @module deps — what the API needs from the outside; functions/ builds it once per process from Context + Config. */
import type {
  AddressPolicy,
  ChannelSender,
  Clock,
  CommandDeps,
  LiveOutputReader,
  Logger,
  QueueAdapter,
  TraceSpan,
  Tracing,
  TransitionSink,
} from '@jobs/core';
import type { ApiStore } from '@jobs/store';
import type { ApiKey, Principal } from './keys';

export interface ApiDeps {
  /** The store's read port, the access writes and the core's command port (not the whole store). */
  store: ApiStore;
  queue: QueueAdapter;
  /** Which queue `queue` is, as /healthz names it (default redis). */
  queueBackend?: 'redis' | 'postgres';
  clock: Clock;
  sink: TransitionSink;
  logger: Logger;
  /** Running attempts' output so far (the workers' live buffer); absent: a running attempt's output reads empty. */
  liveOutput?: LiveOutputReader | null;
  /**
   * How a follow stream (GET /executions/{id}/output?follow=true) ends: by default it runs until the attempt ends
   * (at most ten minutes). Behind a buffering gateway (Lambda) give it a window: it sends what there is, ends with an
   * SSE `retry:` hint, and the client reconnects with Last-Event-ID to get what follows.
   */
  outputFollow?: OutputFollowOptions;
  /** Which addresses HTTP targets may reach (HTTP_TARGET_ALLOW); a denied literal address is a 400 at create. */
  targetPolicy?: AddressPolicy;
  /** Sends POST /channels/{name}/test's message; absent: the test answers that no sender is configured. */
  channelSender?: ChannelSender;
  /**
   * Keys accepted on /api/v1 and by the dashboard, each with a name and a role; a bare string is an admin key named
   * by its position (key1, key2, …). Empty: the API is open (local development only, loopback requests only).
   */
  apiKeys: readonly (string | ApiKey)[];
  /** Spans per request and trigger (OpenTelemetry, in functions/); absent: tracing is off and costs nothing. */
  tracing?: Tracing | null;
  /**
   * Wrong keys a source address may present a minute before its requests get 429 until the minute ends
   * (AUTH_FAILURE_LIMIT; default AUTH_MAX_FAILURES).
   */
  authFailureLimit?: number;
  /** A bearer token GET /metrics accepts besides the API keys (METRICS_TOKEN), for scrapers. */
  metricsToken?: string;
  /**
   * Jobs whose last success and last failure GET /metrics reports (METRICS_JOBS: `names` null for every live job),
   * at most `max` of them (METRICS_JOBS_MAX). Absent: no per-job series.
   */
  metricsJobs?: { names: readonly string[] | null; max: number } | null;
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
 * Hono environment of every route: the request id set by the request-log middleware; on /api/v1 also the principal
 * and the commands that audit under its name (set by the auth middleware).
 */
export interface ApiEnv {
  Variables: { requestId: string; principal: Principal; commands: CommandDeps; span?: TraceSpan };
}

/** See ApiDeps.outputFollow. */
export interface OutputFollowOptions {
  /** How long one response keeps looking for new output before it ends with a `retry:` hint (0: one look). */
  windowMs: number;
  /** The `retry:` hint: how long the client waits before it reconnects. */
  retryMs: number;
  /** Most bytes of events one response carries; more waits for the reconnect, which is then asked at once. */
  maxBytes: number;
}
