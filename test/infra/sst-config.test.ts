/** The resource graph of sst.config.ts under `sst dev` and `sst deploy` for the dev and production stages. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONTAINER_MAX_TASKS } from '../../infra/budget';
import { linkedCredentials, plainEnvironment, ssmParameters, startedEnvironment } from './runtime-env';
import { FAKE, FakeOutput, evaluateSstConfig, resolve, uninstallSstGlobals } from './sst-globals';
import type { Args, ResourceGraph } from './sst-globals';

// Production with its queue on Redis, the setting's other value: the Redis-shaped graph (ElastiCache, its replica,
// REDIS_URL, the larger worker reservation) is checked here; the committed production (queue: 'postgres') is checked
// in queue-postgres.test.ts.
vi.mock('../../infra/settings', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../infra/settings')>();
  const stages = {
    ...original.STAGE_SETTINGS,
    production: { ...original.STAGE_SETTINGS.production, queue: 'redis' as const },
  };
  return {
    ...original,
    STAGE_SETTINGS: stages,
    stageSettings: (stage: string) => original.stageSettings(stage, stages),
  };
});

/** Functions that serve traffic or run jobs; they must wait for the deploy's migrations. */
const RUNTIME_FUNCTIONS = ['ApiHandler', 'Worker', 'Tick'] as const;
const ALL_FUNCTIONS = [...RUNTIME_FUNCTIONS, 'Migrate'] as const;
/** Every runtime but Migrate (which needs PostgreSQL only) reads these. */
const CONTRACT = [
  'DATABASE_URL',
  'DATABASE_SSL',
  'DATABASE_PREPARED_STATEMENTS',
  'REDIS_URL',
  'REDIS_CLUSTER',
  'QUEUE_PREFIX',
  'EVENT_BUS_NAME',
  'SCHEDULE_INTERVAL',
  'LOOKAHEAD',
  'LEASE_TIMEOUT',
  'SHORT_LANE_MAX_TIMEOUT',
] as const;
const WORKER_CONTRACT = ['WORKER_CONCURRENCY', 'WORKER_LANES', 'SHUTDOWN_GRACE'] as const;

/** Seconds in an SST duration ("900 seconds", "5 minutes") or a runtime one ("30s", "2m"). */
function toSeconds(text: unknown): number {
  const match = /^(\d+)\s*(s|seconds?|m|minutes?)$/.exec(String(resolve(text)));
  if (!match) throw new Error(`not a duration: ${String(text)}`);
  return Number(match[1]) * (match[2]!.startsWith('m') ? 60 : 1);
}

const env = plainEnvironment;

/** Runs a `transform` hook the way the component would and returns the resulting args and options. */
function applyTransform(hook: unknown, args: Args, opts: Args = {}) {
  if (typeof hook === 'function') hook(args, opts, 'name');
  else if (hook) Object.assign(args, hook);
  return { args, opts };
}

const scenarios = [
  { title: 'sst dev --stage dev', stage: 'dev', dev: true, production: false },
  { title: 'sst deploy --stage dev', stage: 'dev', dev: false, production: false },
  { title: 'sst deploy --stage production', stage: 'production', dev: false, production: true },
];

describe.each(scenarios)('$title', (scenario) => {
  let graph: ResourceGraph;
  let outputs: Record<string, unknown>;
  let app: { removal?: string; protect?: boolean; name: string; home: string };

  beforeAll(async () => {
    ({ graph, outputs, app } = await evaluateSstConfig(scenario));
  });
  afterAll(uninstallSstGlobals);

  const fn = (name: string) => graph.one('sst.aws.Function', name);
  const instance = (kind: string, name: string) => graph.one(kind, name).instance;
  const service = () => graph.one('sst.aws.Service', 'ContainerWorker');

  it("names the app and applies the stage's removal policy", () => {
    expect(app.name).toBe('jobs-scheduler');
    expect(app.home).toBe('aws');
    expect(app.removal).toBe(scenario.production ? 'retain' : 'remove');
    expect(app.protect).toBe(scenario.production);
  });

  it('defines every component', () => {
    expect(graph.one('sst.aws.Vpc', 'Vpc').args).toMatchObject({
      nat: { type: 'ec2' },
      bastion: !scenario.production,
    });
    graph.one('sst.aws.Postgres', 'Database');
    graph.one('sst.aws.Redis', 'Redis');
    graph.one('sst.Secret', 'ApiKeys');
    graph.one('sst.aws.Bus', 'Events');
    graph.one('sst.aws.ApiGatewayV2', 'Api');
    graph.one('sst.aws.Cron', 'TickSchedule');
    graph.one('sst.aws.Cluster', 'Cluster');
    service();
    expect(fn('ApiHandler').args.handler).toBe('functions/api.handler');
    expect(fn('Worker').args.handler).toBe('functions/worker.handler');
    expect(fn('Tick').args.handler).toBe('functions/tick.handler');
    expect(fn('Migrate').args.handler).toBe('functions/migrate.handler');
  });

  it('puts every function, the service and both data stores in the VPC', () => {
    const vpc = instance('sst.aws.Vpc', 'Vpc');
    for (const f of graph.all('sst.aws.Function')) {
      expect(f.args.vpc, f.name).toBe(vpc);
      expect(f.args.runtime, f.name).toBe('nodejs22.x');
    }
    expect(graph.one('sst.aws.Cluster', 'Cluster').args.vpc).toBe(vpc);
    expect(service().args.cluster).toBe(instance('sst.aws.Cluster', 'Cluster'));
    expect(graph.one('sst.aws.Postgres', 'Database').args.vpc).toBe(vpc);
    expect(graph.one('sst.aws.Redis', 'Redis').args.vpc).toBe(vpc);
  });

  it('links each Lambda to the stores whose passwords it needs, only the API to the keys, only the worker to the signing secret, and nothing to the bus', () => {
    const db = instance('sst.aws.Postgres', 'Database');
    const app = instance('sst.Linkable', 'DatabaseApp');
    const redis = instance('sst.aws.Redis', 'Redis');
    const secret = instance('sst.Secret', 'ApiKeys');
    const signing = instance('sst.Secret', 'HttpSigningSecret');
    // The master user (Database) is linked to the migration step only; the runtimes get the application role.
    const expected: Record<string, object[]> = {
      ApiHandler: [app, redis, secret],
      Worker: [app, redis, signing],
      Tick: [app, redis],
      Migrate: [db, app],
    };
    for (const name of ALL_FUNCTIONS) {
      const link = fn(name).args.link as object[];
      expect(link.length, name).toBe(expected[name]!.length);
      for (const resource of expected[name]!) expect(link.includes(resource), name).toBe(true);
    }
    // A Service writes linked values into the task's plain environment, so the container worker links nothing.
    expect(service().args.link).toBeUndefined();
  });

  it('gives every runtime the environment contract as plain strings', () => {
    const busName = resolve((instance('sst.aws.Bus', 'Events') as { name: unknown }).name);
    for (const runtime of [...RUNTIME_FUNCTIONS.map(fn), service()]) {
      const vars = startedEnvironment(graph, runtime);
      for (const key of CONTRACT) expect(typeof vars[key], `${runtime.name} ${key}`).toBe('string');
      for (const value of Object.values(env(runtime))) expect(typeof value).toBe('string');
      expect(vars.QUEUE_PREFIX).toBe('{jobs}');
      expect(vars.EVENT_BUS_NAME).toBe(busName);
      expect(vars.LEASE_TIMEOUT).toBe('30s');
      expect(vars.SHORT_LANE_MAX_TIMEOUT).toBe('600s');
      // No RDS Proxy by default (infra/settings.ts): named statements everywhere.
      expect(vars.DATABASE_PREPARED_STATEMENTS).toBe('named');
    }
    expect(Object.keys(env(fn('Migrate'))).sort()).toEqual(
      scenario.dev ? ['DATABASE_SSL', 'DATABASE_URL'] : ['DATABASE_APP_ROLE', 'DATABASE_SSL', 'DATABASE_URL'],
    );
    for (const worker of [fn('Worker'), service()]) {
      const vars = env(worker);
      for (const key of WORKER_CONTRACT) expect(typeof vars[key], `${worker.name} ${key}`).toBe('string');
      expect(Number(vars.WORKER_CONCURRENCY)).toBeGreaterThan(0);
    }
    expect(env(fn('Worker')).WORKER_LANES).toBe('short');
    expect(env(service()).WORKER_LANES).toBe('long,short');
    expect(env(fn('Tick')).WORKER_LANES).toBeUndefined();
    // The tick sizes its fan-out of wake-ups by the worker Lambda's concurrency.
    expect(env(fn('Tick')).WORKER_CONCURRENCY).toBe(env(fn('Worker')).WORKER_CONCURRENCY);
    expect(Number(env(fn('Tick')).WAKE_MAX_WORKERS)).toBeGreaterThan(0);
  });

  it("passes the runtime's own configuration check in every runtime, with the credentials it gets at start", async () => {
    const { loadConfig } = await import('../../functions/config');
    const migrate = loadConfig(env(fn('Migrate')) as NodeJS.ProcessEnv, linkedCredentials(fn('Migrate')));
    expect(new URL(migrate.databaseUrl).hostname).toBe(scenario.dev ? '127.0.0.1' : FAKE.postgres.instanceHost);
    for (const runtime of [...RUNTIME_FUNCTIONS.map(fn), service()]) {
      const config = loadConfig(startedEnvironment(graph, runtime) as NodeJS.ProcessEnv, linkedCredentials(runtime));
      expect(config.redisCluster, runtime.name).toBe(!scenario.dev);
      expect(config.databaseAppRole, runtime.name).toBeNull();
      if (!scenario.dev) {
        // Every runtime logs in as the role the migration step creates, with the password that step sets.
        const db = new URL(config.databaseUrl);
        expect(db.username, runtime.name).toBe('jobs_app');
        expect(decodeURIComponent(db.password), runtime.name).toBe(migrate.databaseAppRole?.password);
        expect(decodeURIComponent(db.password), runtime.name).not.toBe(FAKE.postgres.password);
        expect(decodeURIComponent(new URL(config.redisUrl).password), runtime.name).toBe(FAKE.redis.password);
      }
    }
    // Only the migration step connects as the master user, and it creates or updates the role (not in `sst dev`).
    if (scenario.dev) expect(migrate.databaseAppRole).toBeNull();
    else {
      expect(new URL(migrate.databaseUrl).username).toBe(FAKE.postgres.username);
      expect(decodeURIComponent(new URL(migrate.databaseUrl).password)).toBe(FAKE.postgres.password);
      expect(migrate.databaseAppRole).toEqual({ name: 'jobs_app', password: expect.stringMatching(/^[\w-]{40,}$/) });
    }
    const api = loadConfig(env(fn('ApiHandler')) as NodeJS.ProcessEnv, linkedCredentials(fn('ApiHandler')));
    // A bare key in the secret is an admin key named key1 (the `name:role:key` format is the README's).
    expect(api.apiKeys).toEqual([
      { name: 'key1', role: 'admin', key: resolve((instance('sst.Secret', 'ApiKeys') as { value: unknown }).value) },
    ]);
    // The API answers the API Gateway's own host name (and loopback ones only): DNS rebinding defence.
    const apiUrl = resolve((instance('sst.aws.ApiGatewayV2', 'Api') as { url: unknown }).url) as string;
    expect(api.allowedHosts).toEqual([new URL(apiUrl).hostname]);
  });

  it("routes the API gateway's $default route to the api function", () => {
    const routes = graph.all('sst.aws.ApiGatewayV2.route');
    expect(routes.map((r) => r.name)).toEqual(['$default']);
    const route = routes[0]!;
    expect(route.args.api).toBe(instance('sst.aws.ApiGatewayV2', 'Api'));
    expect(resolve(route.args.handler)).toBe(
      resolve((instance('sst.aws.Function', 'ApiHandler') as { arn: unknown }).arn),
    );
  });

  it("subscribes the worker Lambda to the bus's work-available events", () => {
    const subscription = graph.one('sst.aws.Bus.subscribe', 'WorkAvailable');
    expect(subscription.args.bus).toBe(instance('sst.aws.Bus', 'Events'));
    expect(subscription.args.subscriber).toBe(instance('sst.aws.Function', 'Worker'));
    expect(resolve(subscription.args.pattern)).toEqual({ source: ['jobs.scheduler'], detailType: ['work-available'] });
  });

  it('runs the tick Lambda every minute', () => {
    const cron = graph.one('sst.aws.Cron', 'TickSchedule');
    expect(cron.args.schedule).toBe('rate(1 minute)');
    expect(cron.args.function ?? cron.args.job).toBe(instance('sst.aws.Function', 'Tick'));
    expect(toSeconds(fn('Tick').args.timeout)).toBe(60);
    const vars = env(fn('Tick'));
    expect(toSeconds(vars.SCHEDULE_INTERVAL)).toBe(60);
    // Fire times due before the next tick must already be in the delayed set.
    expect(toSeconds(vars.LOOKAHEAD)).toBeGreaterThan(toSeconds(vars.SCHEDULE_INTERVAL));
  });

  it('keeps the timeouts consistent', () => {
    const worker = fn('Worker');
    const vars = env(worker);
    const lambdaTimeout = toSeconds(worker.args.timeout);
    expect(lambdaTimeout).toBeLessThanOrEqual(900);
    expect(lambdaTimeout).toBeGreaterThan(toSeconds(vars.SHORT_LANE_MAX_TIMEOUT) + toSeconds(vars.SHUTDOWN_GRACE));
    expect(toSeconds(vars.SHUTDOWN_GRACE)).toBeGreaterThanOrEqual(toSeconds(vars.LEASE_TIMEOUT));
    expect(lambdaTimeout).toBeGreaterThan(toSeconds(vars.LEASE_TIMEOUT));
    // API Gateway's HTTP API gives up after 30 s: the Lambda ends first, and its statements before it.
    const apiTimeout = toSeconds(fn('ApiHandler').args.timeout);
    expect(apiTimeout).toBeLessThan(30);
    expect(toSeconds(env(fn('ApiHandler')).DATABASE_QUERY_TIMEOUT)).toBeLessThan(apiTimeout);

    const taskDefinition = applyTransform(service().args.transform?.taskDefinition, {
      containerDefinitions: new FakeOutput(JSON.stringify([{ name: 'ContainerWorker' }])),
    }).args;
    const [container] = JSON.parse(String(resolve(taskDefinition.containerDefinitions))) as { stopTimeout?: number }[];
    expect(container!.stopTimeout).toBeLessThanOrEqual(120);
    expect(container!.stopTimeout).toBeGreaterThan(toSeconds(env(service()).SHUTDOWN_GRACE));
  });

  it('builds the container worker from infra/worker.Dockerfile and autoscales it', () => {
    const { args } = service();
    expect(args.image).toEqual({ context: '.', dockerfile: 'infra/worker.Dockerfile' });
    expect(existsSync(fileURLToPath(new URL('../../infra/worker.Dockerfile', import.meta.url)))).toBe(true);
    // Queue metrics decide (test/infra/production.test.ts), not CPU or memory.
    expect(args.scaling).toEqual({ min: 1, max: CONTAINER_MAX_TASKS, cpuUtilization: false, memoryUtilization: false });
    expect(args.dev.command).toBe('npm run worker');
  });

  it('configures Redis with noeviction and TLS-only cluster mode on AWS', () => {
    const { args } = graph.one('sst.aws.Redis', 'Redis');
    expect(args.parameters).toEqual({ 'maxmemory-policy': 'noeviction' });
    expect(args.cluster).toBeTruthy();
    expect(['redis', 'valkey']).toContain(args.engine);
    expect(args.dev).toEqual({ host: '127.0.0.1', port: 6379 });
  });

  it('returns the API URL in the outputs', () => {
    expect(resolve(outputs.api)).toBe(FAKE.apiUrl);
  });

  if (scenario.dev) {
    it('points every runtime at the local PostgreSQL and Redis', () => {
      expect(graph.one('sst.aws.Postgres', 'Database').args.dev).toMatchObject({
        host: '127.0.0.1',
        port: 5432,
        username: 'postgres',
        database: 'postgres',
      });
      for (const runtime of [...RUNTIME_FUNCTIONS.map(fn), service()]) {
        expect(env(runtime)).toMatchObject({
          DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
          DATABASE_SSL: 'off',
          REDIS_URL: 'redis://127.0.0.1:6379',
          REDIS_CLUSTER: 'false',
        });
      }
      expect(env(fn('Migrate'))).toEqual({
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
        DATABASE_SSL: 'off',
      });
      expect(service().args.ssm).toBeUndefined();
    });

    it('migrates the local database with a dev command instead of a deploy-time invocation', () => {
      expect(graph.all('aws.lambda.Invocation')).toEqual([]);
      expect(graph.one('sst.x.DevCommand', 'MigrateLocal').args.dev.command).toBe('npm run migrate');
      const { opts } = applyTransform(fn('Worker').args.transform?.function, {});
      expect(opts.dependsOn).toBeUndefined();
    });
  } else {
    it('connects over TLS to ElastiCache in cluster mode and RDS', () => {
      for (const runtime of [...ALL_FUNCTIONS.map(fn), service()]) {
        const vars = startedEnvironment(graph, runtime);
        const db = new URL(String(vars.DATABASE_URL));
        expect(db.protocol).toBe('postgres:');
        const pooled = false;
        expect(db.hostname, runtime.name).toBe(pooled ? FAKE.postgres.proxyHost : FAKE.postgres.instanceHost);
        expect(db.pathname).toBe(`/${FAKE.postgres.database}`);
        // Verified against the RDS CA bundle (functions/resources.ts databaseTls), not only encrypted.
        expect(vars.DATABASE_SSL, runtime.name).toBe('verify');
        if (runtime.name === 'Migrate') continue;
        const redis = new URL(String(vars.REDIS_URL));
        expect(redis.protocol).toBe('rediss:');
        expect(decodeURIComponent(redis.username)).toBe(FAKE.redis.username);
        expect(redis.hostname).toBe(FAKE.redis.host);
        expect(redis.port).toBe(String(FAKE.redis.port));
        expect(vars.REDIS_CLUSTER).toBe('true');
      }
      // The container's URLs, with their passwords, are SecureString parameters that ECS injects.
      const parameters = ssmParameters(graph, service());
      expect(Object.keys(parameters).sort()).toEqual(['DATABASE_URL', 'HTTP_SIGNING_SECRET', 'REDIS_URL']);
      expect(resolve(parameters.HTTP_SIGNING_SECRET!.args.value)).toBe('value-of-secret-HttpSigningSecret');
      for (const parameter of Object.values(parameters)) expect(parameter.args.type).toBe('SecureString');
      const containerDb = new URL(String(resolve(parameters.DATABASE_URL!.args.value)));
      expect(containerDb.username).toBe('jobs_app');
      expect(decodeURIComponent(containerDb.password)).toBe(
        resolve((instance('sst.Linkable', 'DatabaseApp') as { properties: { password: unknown } }).properties.password),
      );
      // A task started mid-deploy reads the role's URL only once the migration step has created the role.
      expect(parameters.DATABASE_URL!.opts).toEqual({
        dependsOn: [graph.one('aws.lambda.Invocation', 'MigrateOnDeploy').instance],
      });
      expect(decodeURIComponent(new URL(String(resolve(parameters.REDIS_URL!.args.value))).password)).toBe(
        FAKE.redis.password,
      );
    });

    it('runs the migrations at deploy time, against the instance, before any runtime resource', () => {
      const migrate = fn('Migrate');
      const invocation = graph.one('aws.lambda.Invocation', 'MigrateOnDeploy');
      expect(resolve(invocation.args.functionName)).toBe(resolve((migrate.instance as { name: unknown }).name));
      expect(invocation.args.triggers?.release).toEqual(expect.any(String));
      expect(new URL(String(env(migrate).DATABASE_URL)).hostname).toBe(FAKE.postgres.instanceHost);

      const hooks = [
        ...RUNTIME_FUNCTIONS.map((name) => fn(name).args.transform?.function),
        service().args.transform?.service,
      ];
      for (const hook of hooks) {
        const { opts } = applyTransform(hook, {});
        expect(opts.dependsOn).toEqual([invocation.instance]);
      }
    });
  }

  if (scenario.production) {
    it('protects the database from deletion, with no RDS Proxy in front (a setting, off by default)', () => {
      const { args } = graph.one('sst.aws.Postgres', 'Database');
      expect(args.proxy).toBe(false);
      const instanceArgs = applyTransform(args.transform?.instance, {}).args;
      expect(instanceArgs).toMatchObject({ deletionProtection: true, skipFinalSnapshot: false });
      expect(instanceArgs.finalSnapshotIdentifier).toMatch(/^[a-z][a-z0-9-]*$/);
    });
  } else {
    it('keeps non-production databases cheap and disposable', () => {
      const { args } = graph.one('sst.aws.Postgres', 'Database');
      expect(args.proxy).toBe(false);
      expect(args.multiAz).toBe(false);
      expect(args.transform).toBeUndefined();
    });
  }
});
