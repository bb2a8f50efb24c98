import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../functions/config';

/** A key long enough to be accepted (API keys have at least 16 characters). */
const GOOD = 'good-key-0123456789';

const problemsOf = (env: NodeJS.ProcessEnv): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('configuration from the environment', () => {
  it('has working defaults for a local run', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: '{jobs}',
      workerLanes: ['short', 'long'],
      eventBusName: null,
      // Each published transition is a PutEvents entry: by default the ones someone acts on.
      eventTransitions: ['failed', 'dead'],
      apiKeys: [],
    });
  });

  it('puts the queue on Redis when REDIS_URL is set, else on PostgreSQL, unless QUEUE_BACKEND says otherwise', () => {
    expect(loadConfig({})).toMatchObject({ queueBackend: 'postgres', nothingConfigured: true });
    expect(loadConfig({ DATABASE_URL: 'postgres://db:5432/jobs' })).toMatchObject({
      queueBackend: 'postgres',
      nothingConfigured: false,
    });
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379' })).toMatchObject({
      queueBackend: 'redis',
      nothingConfigured: false,
    });
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379', QUEUE_BACKEND: 'postgres' }).queueBackend).toBe('postgres');
    expect(loadConfig({ QUEUE_BACKEND: 'redis' })).toMatchObject({
      queueBackend: 'redis',
      redisUrl: 'redis://127.0.0.1:6379',
    });
    expect(problemsOf({ QUEUE_BACKEND: 'kafka' })).toEqual(['QUEUE_BACKEND="kafka" must be one of redis, postgres']);
  });

  it('reads lists with spaces and repeats', () => {
    const config = loadConfig({
      EVENT_TRANSITIONS: ' dead, failed ,dead',
      WORKER_LANES: 'long',
      API_KEYS: 'key-a-0123456789ab, key-b-0123456789ab',
    });
    expect(config.eventTransitions).toEqual(['dead', 'failed']);
    expect(config.workerLanes).toEqual(['long']);
    expect(config.apiKeys.map((k) => k.key)).toEqual(['key-a-0123456789ab', 'key-b-0123456789ab']);
    expect(loadConfig({ EVENT_TRANSITIONS: 'all' }).eventTransitions).toBeNull();
  });

  it('reports every bad variable at once, each with what it accepts', () => {
    const problems = problemsOf({
      EVENT_TRANSITIONS: 'dead,exploded',
      WORKER_LANES: 'fast',
      QUEUE_PREFIX: 'jobs',
      LEASE_TIMEOUT: 'soon',
      WORKER_CONCURRENCY: '0',
      DATABASE_URL: 'mysql://x',
    });
    expect(problems).toHaveLength(6);
    expect(problems.find((p) => p.startsWith('EVENT_TRANSITIONS'))).toMatch(
      /"all" or list statuses from queued, .*skipped \(got "dead,exploded"\)/,
    );
    expect(problems.find((p) => p.startsWith('WORKER_LANES'))).toMatch(/short, long/);
    expect(problems.find((p) => p.startsWith('QUEUE_PREFIX'))).toMatch(/hash tag/);
  });

  it('never echoes a secret it could not parse', () => {
    const problems = problemsOf({ DATABASE_URL: 'postgres://user:hunter2@[bad' });
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('documents every variable it reads in the table of docs/configuration.md', () => {
    const source = readFileSync(new URL('../functions/config.ts', import.meta.url), 'utf8');
    const read = [...source.matchAll(/\b(?:text|duration|integer|url|oneOf)\('([A-Z_]+)'/g)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(15);
    const page = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const table = new Set([...page.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!));
    expect(read.filter((name) => !table.has(name))).toEqual([]);
  });

  it('refuses ALLOWED_HOSTS without API_KEYS (an open API answers loopback only), and anything but host names', () => {
    expect(problemsOf({ ALLOWED_HOSTS: 'api.example.com' })[0]).toMatch(/^ALLOWED_HOSTS is set but API_KEYS is not/);
    expect(problemsOf({ ALLOWED_HOSTS: 'https://api.example.com/', API_KEYS: GOOD })[0]).toMatch(
      /^ALLOWED_HOSTS must list host names/,
    );
    expect(loadConfig({ ALLOWED_HOSTS: 'API.example.com, *', API_KEYS: GOOD }).allowedHosts).toEqual([
      'api.example.com',
      '*',
    ]);
  });

  it('stops on an API key holding whitespace or non-ASCII, naming its position and never its text', () => {
    for (const keys of [`${GOOD},bad key-0123456789`, `${GOOD},tab\tkey-0123456789`, `${GOOD},caf\u00e9-0123456789`]) {
      const problems = problemsOf({ API_KEYS: keys });
      expect(problems, keys).toEqual([expect.stringMatching(/^API_KEYS: key 2 holds whitespace/)]);
      expect(problems[0]).not.toContain(keys.split(',')[1]);
    }
    expect(loadConfig({ API_KEYS: ` ${GOOD} , ${GOOD}-2 ,` }).apiKeys.map((k) => k.key)).toEqual([GOOD, `${GOOD}-2`]);
  });

  it('stops on an API key shorter than 16 characters, saying how to make one and never quoting it', () => {
    for (const list of ['weak:admin:x', `ok:read:${GOOD},weak:admin:fifteen-chars-1`, 'x']) {
      const problems = problemsOf({ API_KEYS: list });
      expect(problems, list).toEqual([
        expect.stringMatching(/^API_KEYS: key \d \(\w+\) is shorter than 16 characters/),
      ]);
      expect(problems[0]).toContain('openssl rand -hex 24');
      expect(problems[0]).not.toContain('fifteen-chars-1');
    }
    expect(loadConfig({ API_KEYS: 'ok:read:sixteen-chars-12' }).apiKeys).toHaveLength(1);
  });

  it('reads named keys with roles; a bare key is an admin key named by its position', () => {
    expect(
      loadConfig({ API_KEYS: `support:read:${GOOD}r-1, ci:operate:${GOOD}o:2,${GOOD}legacy , ops:admin:${GOOD}a-3` })
        .apiKeys,
    ).toEqual([
      { name: 'support', role: 'read', key: `${GOOD}r-1` },
      { name: 'ci', role: 'operate', key: `${GOOD}o:2` },
      { name: 'key3', role: 'admin', key: `${GOOD}legacy` },
      { name: 'ops', role: 'admin', key: `${GOOD}a-3` },
    ]);
    // Not a role: the whole entry is a bare key (keys may hold colons).
    expect(loadConfig({ API_KEYS: `x:owner:${GOOD}` }).apiKeys).toEqual([
      { name: 'key1', role: 'admin', key: `x:owner:${GOOD}` },
    ]);
    const secret = 'Zq8-secret-value';
    for (const [list, problem] of [
      [`a b:read:${secret}`, /^API_KEYS: entry 1 has a name that is not/],
      ['ci:read:', /^API_KEYS: entry 1 \(ci\) has an empty key/],
      [`ci:read:${secret},ci:admin:${GOOD}`, /^API_KEYS: entry 2 repeats the name ci/],
      [`ci:read:${secret},ops:admin:${secret}`, /^API_KEYS: entry 2 \(ops\) repeats the key of ci/],
    ] as const) {
      const problems = problemsOf({ API_KEYS: list });
      expect(problems, list).toEqual([expect.stringMatching(problem)]);
      expect(problems[0]).not.toContain(secret);
    }
  });

  it('stops on a Redis database that is not a number, or not 0 in cluster mode', () => {
    expect(problemsOf({ REDIS_URL: 'redis://h:6379/x' })[0]).toMatch(/^REDIS_URL: the path must be a database number/);
    expect(problemsOf({ REDIS_URL: 'redis://h:6379/3', REDIS_CLUSTER: 'true' })[0]).toMatch(
      /^REDIS_URL names database 3, but REDIS_CLUSTER=true/,
    );
    expect(problemsOf({ REDIS_URL: 'redis://h:6379/3' })).toEqual([]);
  });

  it('reads RELEASE_ID: none by default, printable ASCII without whitespace', () => {
    expect(loadConfig({}).releaseId).toBeNull();
    expect(loadConfig({ RELEASE_ID: '2026-12-02T10:44:08.000Z' }).releaseId).toBe('2026-12-02T10:44:08.000Z');
    expect(problemsOf({ RELEASE_ID: 'a b' })[0]).toMatch(/^RELEASE_ID must be 1-200 printable ASCII/);
    expect(problemsOf({ RELEASE_ID: 'x'.repeat(201) })[0]).toMatch(/^RELEASE_ID must be/);
  });

  it('reads METRICS_JOBS and METRICS_JOBS_MAX: no per-job series by default, * or names, capped', () => {
    expect(loadConfig({}).metricsJobs).toBeNull();
    expect(loadConfig({ METRICS_JOBS_MAX: '5' }).metricsJobs).toBeNull();
    expect(loadConfig({ METRICS_JOBS: '*' }).metricsJobs).toEqual({ names: null, max: 100 });
    expect(loadConfig({ METRICS_JOBS: ' nightly-report , backup,backup', METRICS_JOBS_MAX: '20' }).metricsJobs).toEqual(
      { names: ['nightly-report', 'backup'], max: 20 },
    );
    expect(problemsOf({ METRICS_JOBS: 'a,,b' })[0]).toMatch(
      /^METRICS_JOBS must be \* or job names separated by commas/,
    );
    expect(problemsOf({ METRICS_JOBS: '*', METRICS_JOBS_MAX: '0' })[0]).toMatch(
      /^METRICS_JOBS_MAX="0" must be a whole number from 1 to 10000/,
    );
  });

  it('reads COMMAND_JOBS and JOB_USER', () => {
    expect(loadConfig({}).commandJobs).toBe(true);
    expect(loadConfig({ COMMAND_JOBS: 'off' }).commandJobs).toBe(false);
    expect(problemsOf({ COMMAND_JOBS: 'no' })[0]).toMatch(/^COMMAND_JOBS="no" must be one of on, off/);
    expect(loadConfig({ JOB_USER: 'jobs' }).jobUser).toBe('jobs');
    expect(problemsOf({ JOB_USER: 'a b' })[0]).toMatch(/^JOB_USER must be a user name/);
  });

  it('reads SECRETS_KEY and SECRETS_KEY_PREVIOUS, never echoing a key', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({}).secretsKeyring).toBeNull();
    expect(loadConfig({ SECRETS_KEY: key }).secretsKeyring?.current.length).toBe(32);
    expect(loadConfig({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: key }).secretsKeyring?.previous.length).toBe(1);
    const problem = problemsOf({ SECRETS_KEY: 'c2hvcnQta2V5' })[0]!;
    expect(problem).toMatch(/^SECRETS_KEY must be 32 random bytes in base64/);
    expect(problem).not.toContain('c2hvcnQta2V5');
  });

  it('reads JOB_ENV_PASSTHROUGH and refuses to pass the scheduler its own secrets', () => {
    expect(loadConfig({}).jobEnvPassthrough).toEqual([]);
    expect(loadConfig({ JOB_ENV_PASSTHROUGH: 'AWS_REGION, PIP_*' }).jobEnvPassthrough).toEqual(['AWS_REGION', 'PIP_*']);
    expect(loadConfig({ JOB_ENV_PASSTHROUGH: '*' }).jobEnvPassthrough).toBe('*');
    expect(problemsOf({ JOB_ENV_PASSTHROUGH: 'DATABASE_URL' })[0]).toMatch(
      /DATABASE_URL is the scheduler's own secret/,
    );
    expect(problemsOf({ JOB_ENV_PASSTHROUGH: 'A-B' })[0]).toMatch(/is not a variable name/);
  });
});
