/**
 * @module config — the one place that reads the environment (and SST's linked resources). Every variable is
 * validated at start, all problems are reported at once, and nothing below functions/ ever reads process.env.
 */
import {
  EXECUTION_STATUSES,
  LANES,
  LIVE_OUTPUT_DEFAULTS,
  parseAllowList,
  parseDuration,
  PRIVATE_ENV,
  type EnvPassthrough,
  type ExecutionStatus,
  type Lane,
} from '@jobs/core';
import { AUTH_MAX_FAILURES, parseApiKeys, type ApiKey } from '@jobs/api';
import { parseMasterKey, type Keyring } from '@jobs/store';
import { closeSync, readFileSync } from 'node:fs';
import { Resource } from 'sst/resource';

export interface Config {
  databaseUrl: string;
  /** TLS to PostgreSQL (RDS): `require` verifies nothing but encrypts; `verify` checks the certificate. */
  databaseSsl: 'off' | 'require' | 'verify';
  /**
   * The least-privilege role the migration step creates or updates after migrating (DATABASE_APP_ROLE, its password
   * DATABASE_APP_PASSWORD or the linked DatabaseApp's); null: none (the runtimes use DATABASE_URL's user).
   */
  databaseAppRole: { name: string; password: string } | null;
  /** Connections a process's pool may open (Lambdas always use 1). */
  databasePoolMax: number;
  /** A query that has not answered after this long fails (the connection is dropped). */
  databaseQueryTimeoutMs: number;
  /**
   * `named`: hot-path statements are prepared once per connection; `unnamed`: parsed on every call, so nothing
   * session-scoped is left behind a connection pooler such as RDS Proxy.
   */
  databaseStatements: 'named' | 'unnamed';
  /**
   * Where the queue lives: `redis` (REDIS_URL) or `postgres` (tables in DATABASE_URL's database). Default: redis when
   * REDIS_URL is set, else postgres.
   */
  queueBackend: 'redis' | 'postgres';
  /** Neither DATABASE_URL nor REDIS_URL is set: `npm start` runs an embedded PostgreSQL (functions/embedded-postgres.ts). */
  nothingConfigured: boolean;
  redisUrl: string;
  redisCluster: boolean;
  queuePrefix: string;
  httpPort: number;
  /** `name:role:key` entries of API_KEYS (a bare key: an admin key named key<position>). */
  apiKeys: ApiKey[];
  /** Audit rows older than this are deleted by the scheduler pass (AUDIT_RETENTION, default 365d). */
  auditRetentionMs: number;
  /** Host names the API answers besides loopback ones (with API_KEYS only); `*` for any. */
  allowedHosts: string[];
  /** False: command jobs are refused at create (400) and never run (handlers only). */
  commandJobs: boolean;
  /** User commands run as when the worker is root (null: the default, `nobody`). */
  jobUser: string | null;
  /** JOB_ENV_PASSTHROUGH: the worker's variables a command gets besides the built ones; `*`: all but the scheduler's. */
  jobEnvPassthrough: EnvPassthrough;
  /** SECRETS_KEY (current) and SECRETS_KEY_PREVIOUS: the master keys of job secrets; null: secrets are off. */
  secretsKeyring: Keyring | null;
  /** HTTP_TARGET_ALLOW: CIDRs and host names HTTP targets may reach although the guard denies them. */
  httpTargetAllow: { cidrs: string[]; hosts: string[] };
  /** HTTP_SIGNING_SECRET (or the linked HttpSigningSecret), split on commas: the first signs; empty: unsigned. */
  httpSigningSecrets: string[];
  /** LAMBDA_ENDPOINT: the Invoke endpoint of Lambda targets (null: the region's). */
  lambdaEndpoint: string | null;
  /** Largest request body the API accepts. */
  bodyLimitBytes: number;
  /** AUTH_FAILURE_LIMIT: wrong API keys a source address may present a minute before it gets 429s. */
  authFailureLimit: number;
  scheduleIntervalMs: number;
  lookaheadMs: number;
  misfireGraceMs: number;
  reconcileIntervalMs: number;
  /** Finished executions are deleted after this long (failed and dead ones: deadRetentionMs); null: kept forever. */
  historyRetentionMs: number | null;
  deadRetentionMs: number | null;
  /** False: running attempts' output is not streamed (GET /executions/{id}/output then has final output only). */
  liveOutput: boolean;
  /** Bytes of live output kept per running attempt on Redis (the newest). */
  liveOutputMaxBytes: number;
  /** Bytes of live output all attempts may hold in Redis at once. */
  liveOutputBudgetBytes: number;
  workerConcurrency: number;
  workerLanes: Lane[];
  leaseMs: number;
  shutdownGraceMs: number;
  shortLaneMaxTimeoutMs: number;
  eventBusName: string | null;
  /** Statuses whose transitions are published to the bus (default failed and dead); null = all. */
  eventTransitions: ExecutionStatus[] | null;
  /** Most worker Lambdas one tick wakes. */
  wakeMaxWorkers: number;
  handlersModule: string | null;
  /** CloudWatch namespace of the tick's metrics (EMF log lines); null: none are written. */
  metricsNamespace: string | null;
  /** Bearer token GET /metrics accepts besides the API keys (scrapers); null: the keys only. */
  metricsToken: string | null;
  /**
   * METRICS_JOBS and METRICS_JOBS_MAX: the jobs GET /metrics gives per-job series (`names` null: every live job), at
   * most `max`; null: none.
   */
  metricsJobs: { names: string[] | null; max: number } | null;
  /** `npm run worker`: port of its own /metrics (per-process series); null: none served. */
  metricsPort: number | null;
  /** OTLP/HTTP traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces); null: tracing off. */
  otelTracesUrl: string | null;
  /** service.name of this process's spans (OTEL_SERVICE_NAME). */
  otelServiceName: string;
  /**
   * RELEASE_ID: the deploy's release this process runs. Workers retire when a newer one is recorded and its workers
   * serve their lanes; `npm run migrate` records it. Null: none (a worker never retires for a release).
   */
  releaseId: string | null;
  /** Longest a migration's DDL waits for a table lock before the migration is retried (MIGRATION_LOCK_TIMEOUT). */
  migrationLockTimeoutMs: number;
  /** The budget of one migration run, every statement included (MIGRATION_TIMEOUT); not DATABASE_QUERY_TIMEOUT. */
  migrationTimeoutMs: number;
  /**
   * `npm run worker` and `npm run scheduler` do not migrate: they wait this long for the schema to reach the version
   * their code needs (the deploy's migration step runs first), then refuse to start (SCHEMA_WAIT).
   */
  schemaWaitMs: number;
  /** The ECS agent endpoint ECS injects into containers (task scale-in protection); null elsewhere. */
  ecsAgentUri: string | null;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Test only: shifts this process's host clock reading (the fault suite's skewed-clock processes). */
  clockOffsetMs: number;
  /** Started by `npm start`, `npm run worker` or `npm run scheduler`: exit when npm (the parent) dies. */
  exitWithParent: boolean;
}

/**
 * METRICS_JOBS: `*` (null: every live job), or job names separated by commas (as the API stores them: trimmed, NFC);
 * empty: undefined (no per-job series).
 */
function parseMetricsJobs(raw: string, problems: string[]): string[] | null | undefined {
  if (raw === '') return undefined;
  if (raw === '*') return null;
  const names = [...new Set(raw.split(',').map((n) => n.trim().normalize('NFC')))];
  if (names.some((n) => n === '' || n === '*' || n.length > 200)) {
    problems.push(
      `METRICS_JOBS must be * or job names separated by commas, each 1-200 characters (got ${JSON.stringify(clip(raw))})`,
    );
    return undefined;
  }
  return names;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/** Variables handed over by `jobs-supervise --scrub`, read once per process. */
let handedOver: Record<string, string> | null = null;

/**
 * `env` plus the secrets `jobs-supervise --scrub VAR,... -- node ...` moved out of the environment into the pipe
 * named by JOBS_SECRETS_FD: the pipe is read once and closed, so no /proc file of this process holds them
 * (README, "Trust boundary": for a worker that is not root, whose commands run as its own user).
 */
export function withHandedOverSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const fd = env.JOBS_SECRETS_FD;
  if (fd !== undefined && handedOver === null && /^\d+$/.test(fd)) {
    handedOver = {};
    try {
      const text = readFileSync(Number(fd), 'utf8');
      for (const entry of text.split('\0')) {
        const eq = entry.indexOf('=');
        if (eq > 0) handedOver[entry.slice(0, eq)] = entry.slice(eq + 1);
      }
    } finally {
      closeSync(Number(fd));
    }
    if (env === process.env) delete process.env.JOBS_SECRETS_FD;
  }
  return handedOver ? { ...env, ...handedOver } : env;
}

/**
 * Documented in README "Configuration"; keep the two in step. Credentials a URL leaves out (and API keys, when
 * API_KEYS is unset) come from the SST resources linked to the function, which SST ships encrypted in its bundle.
 */
export function loadConfig(
  input: NodeJS.ProcessEnv = process.env,
  linked: LinkedCredentials = linkedCredentials(),
): Config {
  const env = input === process.env ? withHandedOverSecrets(input) : input;
  const problems: string[] = [];
  const text = (name: string, fallback: string) => (env[name] ?? '').trim() || fallback;
  const duration = (name: string, fallback: string, min = 1) => {
    const raw = text(name, fallback);
    const ms = parseDuration(raw);
    if (ms === null || ms < min) {
      problems.push(
        `${name}=${JSON.stringify(raw)} is not a duration of at least ${min} ms (use e.g. 10s, 500ms, 1m, 30d)`,
      );
      return parseDuration(fallback)!;
    }
    return ms;
  };
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = text(name, String(fallback));
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be a whole number from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string, schemes: string[]) => {
    const raw = text(name, fallback);
    try {
      const parsed = new URL(raw);
      if (!schemes.includes(parsed.protocol)) throw new Error('scheme');
    } catch {
      problems.push(`${name} must be a ${schemes.join(' or ')}// URL (got ${JSON.stringify(redact(raw))})`);
    }
    return raw;
  };
  const oneOf = <T extends string>(name: string, fallback: T, values: readonly T[]): T => {
    const raw = text(name, fallback) as T;
    if (!values.includes(raw)) {
      problems.push(`${name}=${JSON.stringify(raw)} must be one of ${values.join(', ')}`);
      return fallback;
    }
    return raw;
  };

  const scheduleIntervalMs = duration('SCHEDULE_INTERVAL', '10s', 100);
  const lanes = text('WORKER_LANES', 'short,long')
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);
  const badLanes = lanes.filter((l) => !(LANES as readonly string[]).includes(l));
  if (badLanes.length > 0 || lanes.length === 0)
    problems.push(`WORKER_LANES must list lanes from ${LANES.join(', ')} (got ${JSON.stringify(env.WORKER_LANES)})`);
  const transitions = text('EVENT_TRANSITIONS', 'failed,dead')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const allTransitions = transitions.length === 1 && transitions[0] === 'all';
  const listedTransitions =
    transitions.length > 0 && transitions.every((s) => (EXECUTION_STATUSES as readonly string[]).includes(s))
      ? [...new Set(transitions as ExecutionStatus[])]
      : null;
  if (!allTransitions && !listedTransitions) {
    problems.push(
      `EVENT_TRANSITIONS must be "all" or list statuses from ${EXECUTION_STATUSES.join(', ')} (got ${JSON.stringify(env.EVENT_TRANSITIONS)})`,
    );
  }
  const queuePrefix = text('QUEUE_PREFIX', '{jobs}');
  if (!/\{[^{}]+\}/.test(queuePrefix))
    problems.push(`QUEUE_PREFIX must contain a {hash tag}, e.g. {jobs} (got ${JSON.stringify(queuePrefix)})`);
  const cluster = text('REDIS_CLUSTER', 'false');
  if (!['true', 'false'].includes(cluster))
    problems.push(`REDIS_CLUSTER must be true or false (got ${JSON.stringify(cluster)})`);

  const namespace = text('METRICS_NAMESPACE', '');
  if (namespace && !/^[A-Za-z0-9 ._/#:-]{1,255}$/.test(namespace)) {
    problems.push(
      `METRICS_NAMESPACE must be 1-255 letters, digits, spaces or . _ / # : - (got ${JSON.stringify(namespace)})`,
    );
  }
  const allow = parseAllowList(text('HTTP_TARGET_ALLOW', ''));
  for (const problem of allow.problems) problems.push(`HTTP_TARGET_ALLOW: ${problem}`);
  const lambdaEndpoint = text('LAMBDA_ENDPOINT', '');
  if (lambdaEndpoint) url('LAMBDA_ENDPOINT', lambdaEndpoint, ['http:', 'https:']);
  const metricsToken = text('METRICS_TOKEN', '');
  if (metricsToken && !/^[\x21-\x7e]{16,1000}$/.test(metricsToken)) {
    problems.push('METRICS_TOKEN must be 16-1000 printable ASCII characters without whitespace (a bearer token)');
  }
  const metricsJobs = parseMetricsJobs(text('METRICS_JOBS', ''), problems);
  const metricsJobsMax = integer('METRICS_JOBS_MAX', 100, 1, 10_000);
  const otelBase = text('OTEL_EXPORTER_OTLP_ENDPOINT', '');
  const otelTraces = text('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '');
  const otelTracesUrl = otelTraces || (otelBase ? `${otelBase.replace(/\/+$/, '')}/v1/traces` : '');
  if (otelTracesUrl && !/^https?:\/\/[^\s]+$/.test(otelTracesUrl)) {
    problems.push(
      `OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (got ${JSON.stringify(clip(otelTraces || otelBase))})`,
    );
  }
  const releaseId = text('RELEASE_ID', '');
  if (releaseId && !/^[\x21-\x7e]{1,200}$/.test(releaseId))
    problems.push(
      `RELEASE_ID must be 1-200 printable ASCII characters without whitespace (got ${JSON.stringify(clip(releaseId))})`,
    );
  const ecsAgentUri = text('ECS_AGENT_URI', '');
  if (ecsAgentUri && !/^https?:\/\//.test(ecsAgentUri))
    problems.push(`ECS_AGENT_URI must be an http:// URL (got ${JSON.stringify(ecsAgentUri)})`);

  const databaseUrl = url('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres', ['postgres:', 'postgresql:']);
  const appRole = text('DATABASE_APP_ROLE', '');
  const appPassword = text(
    'DATABASE_APP_PASSWORD',
    linked.databaseApp?.username === appRole ? linked.databaseApp.password : '',
  );
  if (appRole && !/^[a-z_][a-z0-9_]{0,62}$/.test(appRole))
    problems.push(
      `DATABASE_APP_ROLE must be a lower-case PostgreSQL identifier (got ${JSON.stringify(clip(appRole))})`,
    );
  if (appRole && !/^[\x21-\x7e]{12,200}$/.test(appPassword))
    problems.push(
      'DATABASE_APP_PASSWORD (or the linked DatabaseApp password) must be 12-200 printable ASCII characters without whitespace when DATABASE_APP_ROLE is set',
    );

  const config: Config = {
    databaseUrl: withPassword(databaseUrl, databasePasswordFor(databaseUrl, linked)),
    databaseAppRole: appRole ? { name: appRole, password: appPassword } : null,
    databaseSsl: oneOf('DATABASE_SSL', 'off', ['off', 'require', 'verify'] as const),
    databasePoolMax: integer('DATABASE_POOL_MAX', 10, 1, 1000),
    databaseQueryTimeoutMs: duration('DATABASE_QUERY_TIMEOUT', '60s', 100),
    databaseStatements: oneOf('DATABASE_PREPARED_STATEMENTS', 'named', ['named', 'unnamed'] as const),
    queueBackend: oneOf('QUEUE_BACKEND', text('REDIS_URL', '') ? 'redis' : 'postgres', ['redis', 'postgres'] as const),
    nothingConfigured: !text('DATABASE_URL', '') && !text('REDIS_URL', ''),
    redisUrl: withPassword(url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']), linked.redisPassword),
    redisCluster: cluster === 'true',
    queuePrefix,
    httpPort: integer('HTTP_PORT', 8080, 0, 65535),
    apiKeys: apiKeys(text('API_KEYS', linked.apiKeys ?? ''), problems),
    auditRetentionMs: duration('AUDIT_RETENTION', '365d', 60_000),
    allowedHosts: text('ALLOWED_HOSTS', '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    commandJobs: oneOf('COMMAND_JOBS', 'on', ['on', 'off'] as const) === 'on',
    jobUser: text('JOB_USER', '') || null,
    jobEnvPassthrough: envPassthrough(text('JOB_ENV_PASSTHROUGH', ''), problems),
    secretsKeyring: keyring(text('SECRETS_KEY', ''), text('SECRETS_KEY_PREVIOUS', ''), problems),
    httpTargetAllow: { cidrs: allow.cidrs, hosts: allow.hosts },
    // Secrets are never echoed in a problem: only their count matters.
    httpSigningSecrets: text('HTTP_SIGNING_SECRET', linked.httpSigningSecret ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    lambdaEndpoint: lambdaEndpoint || null,
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', 256 * 1024, 1024, 6 * 1024 * 1024),
    authFailureLimit: integer('AUTH_FAILURE_LIMIT', AUTH_MAX_FAILURES, 1, 1_000_000),
    scheduleIntervalMs,
    lookaheadMs: duration('LOOKAHEAD', `${Math.max(2 * scheduleIntervalMs, 5000)}ms`, 100),
    misfireGraceMs: duration('MISFIRE_GRACE', '60s', 1000),
    reconcileIntervalMs: duration('RECONCILE_INTERVAL', '30s', 1000),
    historyRetentionMs: duration('HISTORY_RETENTION', '30d', 0) || null,
    deadRetentionMs: duration('DEAD_RETENTION', '90d', 0) || null,
    liveOutput: oneOf('LIVE_OUTPUT', 'on', ['on', 'off'] as const) === 'on',
    liveOutputMaxBytes: integer('LIVE_OUTPUT_MAX_BYTES', LIVE_OUTPUT_DEFAULTS.maxBytes, 32 * 1024, 8 * 1024 * 1024),
    liveOutputBudgetBytes: integer(
      'LIVE_OUTPUT_BUDGET_BYTES',
      LIVE_OUTPUT_DEFAULTS.budgetBytes,
      1024 * 1024,
      4 * 1024 * 1024 * 1024,
    ),
    workerConcurrency: integer('WORKER_CONCURRENCY', 10, 1, 10_000),
    wakeMaxWorkers: integer('WAKE_MAX_WORKERS', 10, 1, 1000),
    workerLanes: badLanes.length === 0 && lanes.length > 0 ? [...new Set(lanes as Lane[])] : ['short', 'long'],
    leaseMs: duration('LEASE_TIMEOUT', '30s', 1000),
    shutdownGraceMs: duration('SHUTDOWN_GRACE', '30s', 0),
    shortLaneMaxTimeoutMs: duration('SHORT_LANE_MAX_TIMEOUT', '600s', 1000),
    eventBusName: text('EVENT_BUS_NAME', '') || null,
    eventTransitions: allTransitions ? null : listedTransitions,
    handlersModule: text('HANDLERS_MODULE', '') || null,
    metricsNamespace: namespace || null,
    metricsToken: metricsToken || null,
    metricsJobs: metricsJobs === undefined ? null : { names: metricsJobs, max: metricsJobsMax },
    otelTracesUrl: otelTracesUrl || null,
    otelServiceName: text('OTEL_SERVICE_NAME', '') || 'jobs-scheduler',
    metricsPort: text('METRICS_PORT', '') === '' ? null : integer('METRICS_PORT', 0, 0, 65535),
    ecsAgentUri: ecsAgentUri || null,
    releaseId: releaseId || null,
    migrationLockTimeoutMs: duration('MIGRATION_LOCK_TIMEOUT', '5s', 10),
    migrationTimeoutMs: duration('MIGRATION_TIMEOUT', '14m', 1000),
    schemaWaitMs: duration('SCHEMA_WAIT', '2m', 0),
    logLevel: oneOf('LOG_LEVEL', 'info', ['debug', 'info', 'warn', 'error', 'silent'] as const),
    clockOffsetMs: integer('CLOCK_OFFSET_MS', 0, -86_400_000, 86_400_000),
    // npm's own variable: our process scripts exec node, so npm is the parent to outlive.
    exitWithParent: ['start', 'worker', 'scheduler'].includes(env.npm_lifecycle_event ?? ''),
  };
  if (config.allowedHosts.length > 0 && config.apiKeys.length === 0) {
    problems.push(
      'ALLOWED_HOSTS is set but API_KEYS is not: an API without keys answers loopback requests only; set API_KEYS to serve other hosts',
    );
  }
  const badHost = config.allowedHosts.find((h) => h !== '*' && !/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(h));
  if (badHost !== undefined)
    problems.push(
      `ALLOWED_HOSTS must list host names without scheme or port, or *, (got ${JSON.stringify(clip(badHost))})`,
    );
  if (config.jobUser !== null && !/^[a-z_][a-z0-9_.-]{0,31}\$?$/i.test(config.jobUser)) {
    problems.push(`JOB_USER must be a user name (got ${JSON.stringify(clip(config.jobUser))})`);
  }
  const redisDb = redisDatabase(config.redisUrl);
  if (redisDb === null)
    problems.push('REDIS_URL: the path must be a database number (e.g. redis://host:6379/2), or empty for 0');
  else if (redisDb !== 0 && config.redisCluster)
    problems.push(`REDIS_URL names database ${redisDb}, but REDIS_CLUSTER=true: a Redis cluster has only database 0`);
  if (config.lookaheadMs <= config.scheduleIntervalMs) {
    problems.push(
      `LOOKAHEAD (${config.lookaheadMs} ms) must exceed SCHEDULE_INTERVAL (${config.scheduleIntervalMs} ms), or fire times would start late`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * API keys from their comma-separated list of `name:role:key` entries or bare keys. A key is sent as a bearer token,
 * so one holding whitespace or a character outside printable ASCII could never be presented: refused at start
 * (naming its position, never its text), as are repeated names and keys.
 */
function apiKeys(list: string, problems: string[]): ApiKey[] {
  const parsed = parseApiKeys(list);
  problems.push(...parsed.problems);
  return parsed.keys;
}

/** The database number in a Redis URL's path; null when it is not a number. Whether the server has it is checked at start. */
export function redisDatabase(url: string): number | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return 0; // the URL itself is reported
  }
  const raw = path.replace(/^\//, '');
  if (raw === '') return 0;
  if (!/^\d{1,9}$/.test(raw)) return null;
  return Number(raw);
}

/** Long values cut for messages (ids and paths are cut to 200 characters wherever they are echoed). */
const clip = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** A URL with its password replaced, for messages and logs. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):([^@]+)@/, '//$1:***@');
  }
}

/** Credentials from the SST resources linked to this function (`link` in infra/); absent when not linked. */
export interface LinkedCredentials {
  /** The master user's (linked `Database`: the migration step only). */
  databasePassword?: string;
  /** The application role's (linked `DatabaseApp`: every runtime, and the migration step, which sets it). */
  databaseApp?: { username: string; password: string };
  redisPassword?: string;
  apiKeys?: string;
  httpSigningSecret?: string;
}

/**
 * Reads the linked `Database`, `DatabaseApp`, `Redis` and `ApiKeys` resources through SST's SDK: in a deployed Lambda they are
 * decrypted from the bundle's resource file (so no password is a plain environment variable of the function), in
 * `sst dev` they arrive from the dev server. Outside SST there are none.
 */
export function linkedCredentials(): LinkedCredentials {
  const resources = Resource as unknown as Record<string, Record<string, unknown> | undefined>;
  const field = (resource: string, key: string) => {
    try {
      if (!(resource in resources)) return undefined;
      const value = resources[resource]?.[key];
      return typeof value === 'string' && value !== '' ? value : undefined;
    } catch {
      return undefined;
    }
  };
  const appUser = field('DatabaseApp', 'username');
  const appPassword = field('DatabaseApp', 'password');
  return {
    databasePassword: field('Database', 'password'),
    databaseApp: appUser && appPassword ? { username: appUser, password: appPassword } : undefined,
    redisPassword: field('Redis', 'password'),
    apiKeys: field('ApiKeys', 'value'),
    httpSigningSecret: field('HttpSigningSecret', 'value'),
  };
}

/** The linked password of the user `url` names: the application role's, else the master user's. */
function databasePasswordFor(url: string, linked: LinkedCredentials): string | undefined {
  let user = '';
  try {
    user = decodeURIComponent(new URL(url).username);
  } catch {
    return linked.databasePassword;
  }
  return linked.databaseApp && linked.databaseApp.username === user
    ? linked.databaseApp.password
    : linked.databasePassword;
}

/** `url` with `password` filled in when it names none (a URL's own password wins). */
export function withPassword(url: string, password: string | undefined): string {
  if (!password) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password || !parsed.username) return url;
    parsed.password = encodeURIComponent(password);
    return parsed.toString();
  } catch {
    return url;
  }
}

/** JOB_ENV_PASSTHROUGH: `*`, or names (each exact or a prefix ending in `*`), separated by commas. */
function envPassthrough(value: string, problems: string[]): EnvPassthrough {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.includes('*')) {
    if (entries.length > 1) problems.push('JOB_ENV_PASSTHROUGH: `*` passes everything; list no names beside it');
    return '*';
  }
  for (const entry of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(entry)) {
      problems.push(
        `JOB_ENV_PASSTHROUGH: ${JSON.stringify(clip(entry))} is not a variable name (or a prefix ending in *)`,
      );
    } else if (PRIVATE_ENV.test(entry)) {
      problems.push(`JOB_ENV_PASSTHROUGH: ${entry} is the scheduler's own secret and never reaches a job`);
    }
  }
  return entries;
}

/** SECRETS_KEY and SECRETS_KEY_PREVIOUS (comma-separated): never echoed in a problem, only which one is wrong. */
function keyring(current: string, previous: string, problems: string[]): Keyring | null {
  if (!current) {
    if (previous) problems.push('SECRETS_KEY_PREVIOUS is set without SECRETS_KEY (the key that replaces it)');
    return null;
  }
  const key = parseMasterKey(current);
  if (typeof key === 'string') {
    problems.push(`SECRETS_KEY ${key}`);
    return null;
  }
  const older: Buffer[] = [];
  previous
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .forEach((text, i) => {
      const parsed = parseMasterKey(text);
      if (typeof parsed === 'string') problems.push(`SECRETS_KEY_PREVIOUS entry ${i + 1} ${parsed}`);
      else older.push(parsed);
    });
  return { current: key, previous: older };
}
