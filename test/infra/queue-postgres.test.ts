/**
 * A stage whose committed setting puts its queue on PostgreSQL (infra/settings.ts `queue: 'postgres'`): no ElastiCache in the
 * resource graph, every runtime told QUEUE_BACKEND=postgres with no Redis URL, no link or SSM parameter for Redis,
 * the runtime's own configuration check passes with the queue on PostgreSQL, and the connection budget, with every
 * worker's LISTEN connection, fits the instance.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_CONNECTIONS, budgetFor, usableConnections, worstCaseConnections } from '../../infra/budget';
import { graphBudget } from './graph-budget';
import { linkedCredentials, plainEnvironment, ssmParameters, startedEnvironment } from './runtime-env';
import { FAKE, evaluateSstConfig, uninstallSstGlobals, type ResourceGraph } from './sst-globals';

const RUNTIMES = ['ApiHandler', 'Worker', 'Tick'] as const;

// A stage `small` with its queue on PostgreSQL, as a project would commit it.
vi.mock('../../infra/settings', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../infra/settings')>();
  const stages = { ...original.STAGE_SETTINGS, small: { queue: 'postgres' as const } };
  return {
    ...original,
    STAGE_SETTINGS: stages,
    stageSettings: (stage: string) => original.stageSettings(stage, stages),
  };
});

describe.each([
  // Production commits its queue to PostgreSQL (infra/settings.ts).
  { title: 'sst deploy --stage production', stage: 'production', dev: false },
  { title: 'sst deploy --stage small', stage: 'small', dev: false },
  { title: 'sst dev --stage small', stage: 'small', dev: true },
])('queue: postgres, $title', (scenario) => {
  let graph: ResourceGraph;

  beforeAll(async () => {
    ({ graph } = await evaluateSstConfig(scenario));
  });
  afterAll(uninstallSstGlobals);

  const fn = (name: string) => graph.one('sst.aws.Function', name);
  const service = () => graph.one('sst.aws.Service', 'ContainerWorker');

  it('deploys no ElastiCache and links nothing of Redis', () => {
    expect(graph.all('sst.aws.Redis')).toEqual([]);
    graph.one('sst.aws.Postgres', 'Database');
    const db = graph.one('sst.aws.Postgres', 'Database').instance;
    const app = graph.one('sst.Linkable', 'DatabaseApp').instance;
    for (const name of RUNTIMES) {
      const link = fn(name).args.link as object[];
      // The application role, not the master user (only Migrate links that).
      expect(link.includes(app), name).toBe(true);
      expect(link.includes(db), name).toBe(false);
      expect(linkedCredentials(fn(name)).redisPassword, name).toBeUndefined();
    }
    if (!scenario.dev)
      expect(Object.keys(ssmParameters(graph, service()))).toEqual(['DATABASE_URL', 'HTTP_SIGNING_SECRET']);
  });

  it('alarms on no Redis, and on the database as on any stage', () => {
    const alarms = graph.all('aws.cloudwatch.MetricAlarm').map((a) => a.name);
    expect(alarms.filter((name) => name.startsWith('Redis'))).toEqual([]);
    if (!scenario.dev)
      expect(alarms).toEqual(expect.arrayContaining(['DatabaseFreeStorageAlarm', 'ContainerWorkersAlarm']));
  });

  it('tells every runtime to queue on PostgreSQL, and the runtime accepts it', async () => {
    const { loadConfig } = await import('../../functions/config');
    for (const runtime of [...RUNTIMES.map(fn), service()]) {
      const vars = plainEnvironment(runtime);
      expect(vars.QUEUE_BACKEND, runtime.name).toBe('postgres');
      expect(vars.REDIS_URL, runtime.name).toBeUndefined();
      expect(vars.REDIS_CLUSTER, runtime.name).toBeUndefined();
      const config = loadConfig(startedEnvironment(graph, runtime) as NodeJS.ProcessEnv, linkedCredentials(runtime));
      expect(config.queueBackend, runtime.name).toBe('postgres');
      if (!scenario.dev) {
        expect(new URL(config.databaseUrl).username, runtime.name).toBe('jobs_app');
        expect(decodeURIComponent(new URL(config.databaseUrl).password), runtime.name).not.toBe(FAKE.postgres.password);
      }
    }
  });

  it('keeps the worst case, LISTEN connections included, within the instance limit', () => {
    const instance = String(graph.one('sst.aws.Postgres', 'Database').args.instance);
    const budget = graphBudget(graph);
    expect(budget).toEqual(budgetFor('postgres'));
    expect(budget.listenPerWorker).toBe(1);
    expect(worstCaseConnections(budget)).toBeLessThanOrEqual(usableConnections(instance)!);
    // The Redis stage's fleet would not fit once every worker listens.
    expect(worstCaseConnections({ ...budgetFor('redis'), listenPerWorker: 1 })).toBeGreaterThan(
      usableConnections(instance)!,
    );
    expect(MAX_CONNECTIONS[instance]).toBeDefined();
  });
});
