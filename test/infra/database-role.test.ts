/**
 * Least privilege in the resource graph: which functions link which PostgreSQL credentials. Only the migration step
 * gets the RDS master user (it owns the schema and creates the application role); the API, the tick and both
 * workers connect as that role, and nothing they get at start carries the master password. With RDS Proxy on, the
 * proxy knows the role's credentials too. (The role's grants are tested against PostgreSQL in test/app-role.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../functions/config';
import { linkedCredentials, plainEnvironment, startedEnvironment } from './runtime-env';
import { FAKE, evaluateSstConfig, resolve, uninstallSstGlobals, type ResourceGraph } from './sst-globals';

const proxy = vi.hoisted(() => ({ on: false }));
vi.mock('../../infra/settings', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../infra/settings')>();
  const withProxy = (stage: string) => ({ ...original.stageSettings(stage), databaseProxy: proxy.on });
  return { ...original, stageSettings: withProxy };
});

const RUNTIMES = ['ApiHandler', 'Worker', 'Tick'] as const;

describe.each([
  { title: 'sst deploy --stage production', stage: 'production', proxy: false },
  { title: 'sst deploy --stage dev', stage: 'dev', proxy: false },
  { title: 'sst deploy --stage production, RDS Proxy on', stage: 'production', proxy: true },
])('$title', (scenario) => {
  let graph: ResourceGraph;
  beforeAll(async () => {
    proxy.on = scenario.proxy;
    ({ graph } = await evaluateSstConfig({ stage: scenario.stage, dev: false }));
  });
  afterAll(uninstallSstGlobals);

  const fn = (name: string) => graph.one('sst.aws.Function', name);
  const service = () => graph.one('sst.aws.Service', 'ContainerWorker');
  const app = () => graph.one('sst.Linkable', 'DatabaseApp');
  const appPassword = () =>
    String(resolve((app().instance as { properties: { password: unknown } }).properties.password));

  it('links the master user (Database) to the migration step only, the application role to every runtime', () => {
    const db = graph.one('sst.aws.Postgres', 'Database').instance;
    const linking = (resource: object) =>
      graph
        .all('sst.aws.Function')
        .filter((f) => ((f.args.link ?? []) as object[]).includes(resource))
        .map((f) => f.name)
        .sort();
    expect(linking(db)).toEqual(['Migrate']);
    expect(linking(app().instance)).toEqual(['ApiHandler', 'Migrate', 'Tick', 'Worker']);
    expect(service().args.link).toBeUndefined();
    expect(resolve(app().args.properties)).toEqual({ username: 'jobs_app', password: appPassword() });
    expect(appPassword()).not.toBe(FAKE.postgres.password);
    expect(appPassword()).toMatch(/^[\w-]{43}$/);
  });

  it('gives no runtime the master password, in its links, its environment or its SSM parameters', () => {
    const master = [FAKE.postgres.password, encodeURIComponent(FAKE.postgres.password)];
    for (const runtime of [...RUNTIMES.map(fn), service()]) {
      const seen = JSON.stringify({
        env: startedEnvironment(graph, runtime),
        linked: linkedCredentials(runtime),
        links: resolve(((runtime.args.link ?? []) as { properties?: unknown }[]).map((l) => l.properties ?? null)),
      });
      for (const secret of master) expect(seen.includes(secret), runtime.name).toBe(false);
      expect(linkedCredentials(runtime).databasePassword, runtime.name).toBeUndefined();
      // What the runtime connects with, its password from the link (Lambdas) or from SSM (the container).
      const url = new URL(loadConfig(startedEnvironment(graph, runtime), linkedCredentials(runtime)).databaseUrl);
      expect(url.username, runtime.name).toBe('jobs_app');
      expect(decodeURIComponent(url.password), runtime.name).toBe(appPassword());
    }
    const migrate = fn('Migrate');
    expect(linkedCredentials(migrate).databasePassword).toBe(FAKE.postgres.password);
    expect(new URL(String(plainEnvironment(migrate).DATABASE_URL)).username).toBe(FAKE.postgres.username);
    expect(plainEnvironment(migrate).DATABASE_APP_ROLE).toBe('jobs_app');
  });

  if (scenario.proxy) {
    it("registers the application role's credentials with RDS Proxy, in a secret of its own", async () => {
      const args = graph.one('sst.aws.Postgres', 'Database').args;
      const { credentials } = resolve(args.proxy) as { credentials: { username: string; password: unknown }[] };
      expect(credentials.map((c) => c.username)).toEqual(['jobs_app']);
      // Known only once the database exists: a promise of the password, as Pulumi takes an input.
      expect(resolve(await credentials[0]!.password)).toBe(appPassword());
      graph.one('aws.secretsmanager.Secret', 'DatabaseProxySecretjobs_app');
      for (const runtime of [...RUNTIMES.map(fn), service()])
        expect(new URL(startedEnvironment(graph, runtime).DATABASE_URL!).hostname, runtime.name).toBe(
          FAKE.postgres.proxyHost,
        );
    });
  } else {
    it('creates no RDS Proxy', () => {
      expect(resolve(graph.one('sst.aws.Postgres', 'Database').args.proxy)).toBe(false);
      expect(graph.all('aws.rds.Proxy')).toEqual([]);
    });
  }
});
