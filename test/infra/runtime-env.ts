/**
 * What a runtime of the resource graph sees when it starts: its plain environment, what ECS injects from SSM
 * (the container worker), and the credentials SST decrypts from its links (the Lambdas).
 */
import type { LinkedCredentials } from '../../functions/config';
import { resolve, type Recorded, type ResourceGraph } from './sst-globals';

export function plainEnvironment(record: Recorded): Record<string, unknown> {
  return (resolve(record.args.environment) ?? {}) as Record<string, unknown>;
}

/** The SSM parameters a Service's `ssm` names, by environment variable, with their records. */
export function ssmParameters(graph: ResourceGraph, record: Recorded): Record<string, Recorded> {
  const ssm = (resolve(record.args.ssm) ?? {}) as Record<string, unknown>;
  const parameters = graph.all('aws.ssm.Parameter');
  return Object.fromEntries(
    Object.entries(ssm).map(([name, arn]) => {
      const parameter = parameters.find((p) => resolve((p.instance as { arn: unknown }).arn) === arn);
      if (!parameter) throw new Error(`${record.name}: ssm ${name} names no parameter of the graph (${String(arn)})`);
      return [name, parameter];
    }),
  );
}

/** The environment the process gets: plain variables plus the values ECS reads from SSM. */
export function startedEnvironment(graph: ResourceGraph, record: Recorded): Record<string, string> {
  const injected = Object.fromEntries(
    Object.entries(ssmParameters(graph, record)).map(([name, p]) => [name, String(resolve(p.args.value))]),
  );
  return { ...(plainEnvironment(record) as Record<string, string>), ...injected };
}

/** The credentials `linkedCredentials()` (functions/config.ts) finds in a Lambda's links. */
export function linkedCredentials(record: Recorded): LinkedCredentials {
  const links = (record.args.link ?? []) as {
    constructor: { kind?: string };
    logicalName?: string;
    password?: unknown;
    value?: unknown;
    properties?: { username?: unknown; password?: unknown };
  }[];
  const of = (kind: string, key: 'password' | 'value', name?: string) => {
    const link = links.find((l) => l.constructor.kind === kind && (name === undefined || l.logicalName === name));
    const value = link ? resolve(link[key]) : undefined;
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const app = links.find((l) => l.constructor.kind === 'sst.Linkable' && l.logicalName === 'DatabaseApp')?.properties;
  const appUser = resolve(app?.username);
  const appPassword = resolve(app?.password);
  return {
    databasePassword: of('sst.aws.Postgres', 'password'),
    databaseApp:
      typeof appUser === 'string' && typeof appPassword === 'string' && appPassword !== ''
        ? { username: appUser, password: appPassword }
        : undefined,
    redisPassword: of('sst.aws.Redis', 'password'),
    apiKeys: of('sst.Secret', 'value', 'ApiKeys'),
    httpSigningSecret: of('sst.Secret', 'value', 'HttpSigningSecret'),
  };
}
