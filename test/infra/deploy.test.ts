/**
 * What a deploy must get right that no local run shows (issue #26), asserted on the resource graph with the
 * children the SST components create (test/infra/sst-globals.ts mirrors them): services that can replace their tasks,
 * tasks in private subnets on arm64 without public addresses, a pinned NAT image behind a closed security group,
 * storage that grows, production spread over two zones, and the preflight that refuses an account or a queue
 * switch before anything is declared.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NAT_IMAGE, VPC_CIDR } from '../../infra/settings';
import { reservedConcurrency, queueParameterName, UNRESERVED_MINIMUM } from '../../infra/preflight';
import { startFakeAws, type FakeAws } from './fake-aws';
import { plainEnvironment } from './runtime-env';
import {
  NEWEST_FCK_NAT,
  declaredSoFar,
  evaluateSstConfig,
  resolve,
  uninstallSstGlobals,
  type ResourceGraph,
} from './sst-globals';

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

/**
 * Whether ECS can replace a service's tasks at `desired` running: it may start a new task only if the maximum
 * (rounded down) exceeds the count, or stop an old one first only if the minimum healthy (rounded up) is below it.
 * Unset percents are ECS's rolling-update defaults (100 and 200).
 */
function canReplaceTasks(desired: number, minimumHealthyPercent = 100, maximumPercent = 200): boolean {
  return (
    Math.floor((desired * maximumPercent) / 100) > desired ||
    Math.ceil((desired * minimumHealthyPercent) / 100) < desired
  );
}

const scenarios = [
  { title: 'sst deploy --stage dev', stage: 'dev', dev: false, production: false },
  { title: 'sst deploy --stage production', stage: 'production', dev: false, production: true },
];

describe('ECS rounding', () => {
  it('cannot replace one task at 150% / 100% (the old setting), can at 200% / 100% and at 100% / 0%', () => {
    expect(canReplaceTasks(1, 100, 150)).toBe(false);
    expect(canReplaceTasks(1, 100, 200)).toBe(true);
    expect(canReplaceTasks(1, 0, 100)).toBe(true);
    expect(canReplaceTasks(2, 100, 150)).toBe(true);
  });
});

describe.each(scenarios)('$title', (scenario) => {
  let graph: ResourceGraph;
  beforeAll(async () => {
    ({ graph } = await evaluateSstConfig(scenario));
  });
  afterAll(uninstallSstGlobals);

  it('lets every service replace its tasks at every count from its minimum to its maximum', () => {
    const services = graph.all('aws.ecs.Service');
    expect(services.length).toBeGreaterThan(0);
    for (const service of services) {
      const component = graph.all('sst.aws.Service').find((s) => service.name === `${s.name}Service`)!;
      const scaling = resolve(component.args.scaling) as { min: number; max: number };
      expect(resolve(service.args.desiredCount), service.name).toBe(scaling.min);
      for (let count = scaling.min; count <= scaling.max; count++) {
        expect(
          canReplaceTasks(
            count,
            resolve(service.args.deploymentMinimumHealthyPercent) as number | undefined,
            resolve(service.args.deploymentMaximumPercent) as number | undefined,
          ),
          `${service.name} at ${count} task(s)`,
        ).toBe(true);
      }
    }
  });

  it('runs the tasks in the private subnets, without public IPv4 addresses, on arm64', () => {
    const service = graph.one('aws.ecs.Service', 'ContainerWorkerService').args;
    const network = resolve(service.networkConfiguration) as { assignPublicIp: boolean; subnets: string[] };
    expect(network.assignPublicIp).toBe(false);
    expect(network.subnets).toEqual(
      resolve((graph.one('sst.aws.Vpc', 'Vpc').instance as never as { privateSubnets: unknown }).privateSubnets),
    );
    const task = graph.one('aws.ecs.TaskDefinition', 'ContainerWorkerTask').args;
    expect(task.runtimePlatform.cpuArchitecture).toBe('ARM64');
  });

  it('pins the NAT image (an exact name, deprecated images included) instead of taking the newest', () => {
    const lookups = graph.all('aws.ec2.getAmi').map((l) => l.args);
    expect(lookups).toEqual([
      {
        owners: [NAT_IMAGE.owner],
        filters: [
          { name: 'name', values: [NAT_IMAGE.name] },
          { name: 'architecture', values: ['arm64'] },
        ],
        includeDeprecated: true,
      },
    ]);
    expect(NAT_IMAGE.name).not.toMatch(/\*/);
    const instances = graph.all('aws.ec2.Instance').filter((i) => i.name.startsWith('VpcNatInstance'));
    expect(instances).toHaveLength(2);
    for (const instance of instances) {
      expect(resolve(instance.args.ami)).not.toBe(NEWEST_FCK_NAT);
      expect(resolve(instance.args.ami)).toBe(`ami-pinned-${NAT_IMAGE.name}`);
    }
  });

  it('accepts nothing from the internet on the NAT instances but SSH where they are the bastion', () => {
    const ingress = graph.one('aws.ec2.SecurityGroup', 'VpcNatInstanceSecurityGroup').args.ingress as {
      protocol: string;
      fromPort: number;
      toPort: number;
      cidrBlocks: string[];
    }[];
    const fromAnywhere = ingress.filter((rule) => rule.cidrBlocks.includes('0.0.0.0/0'));
    if (scenario.production) expect(fromAnywhere).toEqual([]);
    else expect(fromAnywhere).toEqual([{ protocol: 'tcp', fromPort: 22, toPort: 22, cidrBlocks: ['0.0.0.0/0'] }]);
    expect(ingress.filter((rule) => !rule.cidrBlocks.includes('0.0.0.0/0'))).toEqual([
      { protocol: '-1', fromPort: 0, toPort: 0, cidrBlocks: [VPC_CIDR] },
    ]);
    expect(resolve(graph.one('sst.aws.Vpc', 'Vpc').args.bastion)).toBe(!scenario.production);
  });

  it('lets RDS grow its storage well beyond the 20 GB it starts with', () => {
    const instance = graph.one('aws.rds.Instance', 'DatabaseInstance').args;
    expect(instance.allocatedStorage).toBe(20);
    expect(instance.maxAllocatedStorage).toBeGreaterThanOrEqual(5 * instance.allocatedStorage);
  });

  it('spreads production over two zones (RDS standby, Redis replica with failover and snapshots), not dev', () => {
    const db = graph.one('aws.rds.Instance', 'DatabaseInstance').args;
    const redis = graph.one('aws.elasticache.ReplicationGroup', 'RedisCluster').args;
    expect(db.multiAz).toBe(scenario.production);
    if (scenario.production) {
      expect(redis).toMatchObject({ replicasPerNodeGroup: 1, multiAzEnabled: true, automaticFailoverEnabled: true });
      expect(redis.snapshotRetentionLimit).toBeGreaterThanOrEqual(1);
    } else {
      expect(redis).toMatchObject({ replicasPerNodeGroup: 0, multiAzEnabled: false });
      expect(redis.snapshotRetentionLimit).toBeUndefined();
    }
  });

  it("records this deploy's release in the migration step and gives the same one to every worker", () => {
    const invocation = graph.one('aws.lambda.Invocation', 'MigrateOnDeploy').args;
    const input = JSON.parse(resolve(invocation.input) as string) as { source: string; release: string };
    expect(input.source).toBe('deploy');
    expect(input.release).toMatch(/^\d{4}-\d\d-\d\dT/);
    // The invocation runs again whenever the release changes, i.e. on every deploy.
    expect(resolve(invocation.triggers)).toEqual({ release: input.release });
    expect(plainEnvironment(graph.one('sst.aws.Function', 'Worker')).RELEASE_ID).toBe(input.release);
    expect(plainEnvironment(graph.one('sst.aws.Service', 'ContainerWorker')).RELEASE_ID).toBe(input.release);
    // The API and the tick do not retire.
    expect(plainEnvironment(graph.one('sst.aws.Function', 'ApiHandler')).RELEASE_ID).toBeUndefined();
  });

  it('records where the queue lives for the next deploy, and publishes failures and dead letters only', () => {
    const record = graph.one('aws.ssm.Parameter', 'QueueBackend').args;
    expect(record).toMatchObject({ name: queueParameterName('jobs-scheduler', scenario.stage), value: 'redis' });
    for (const name of ['ApiHandler', 'Worker', 'Tick'])
      expect(plainEnvironment(graph.one('sst.aws.Function', name)).EVENT_TRANSITIONS, name).toBe('failed,dead');
  });
});

describe('the queue backend is a committed setting', () => {
  afterAll(uninstallSstGlobals);
  it("ignores the deployer's QUEUE_BACKEND", async () => {
    process.env.QUEUE_BACKEND = 'postgres';
    try {
      const { graph } = await evaluateSstConfig({ stage: 'production', dev: false });
      graph.one('sst.aws.Redis', 'Redis');
      expect(plainEnvironment(graph.one('sst.aws.Function', 'Tick')).QUEUE_BACKEND).toBe('redis');
    } finally {
      delete process.env.QUEUE_BACKEND;
    }
  });
});

describe('preflight, against a local Lambda and SSM', () => {
  let aws: FakeAws;
  beforeAll(async () => {
    aws = await startFakeAws();
  });
  afterAll(async () => {
    uninstallSstGlobals();
    await aws.close();
  });
  const deploy = () => evaluateSstConfig({ stage: 'production', dev: false, aws });
  const reserved = reservedConcurrency('redis');

  it('refuses an account whose "Concurrent executions" quota is too small, before declaring anything', async () => {
    aws.state.concurrentExecutions = 10;
    aws.state.unreservedConcurrentExecutions = 10;
    aws.state.requests.length = 0;
    const failure = deploy();
    await expect(failure).rejects.toThrow(/"Concurrent executions".*L-B99A9384.* is 10/s);
    await expect(failure).rejects.toThrow(new RegExp(`at least ${reserved + UNRESERVED_MINIMUM}`));
    await expect(failure).rejects.toThrow(/Nothing was changed/);
    expect(declaredSoFar()).toBe(0);
    expect(aws.state.requests).toContain('GET /2016-08-19/account-settings');
  });

  it('passes at exactly the reservations plus 100 unreserved, fails when other functions reserve some of it', async () => {
    aws.state.concurrentExecutions = reserved + UNRESERVED_MINIMUM;
    aws.state.unreservedConcurrentExecutions = reserved + UNRESERVED_MINIMUM;
    const { graph } = await deploy();
    expect(graph.all('sst.aws.Function').length).toBeGreaterThan(0);
    uninstallSstGlobals();
    aws.state.unreservedConcurrentExecutions = reserved + UNRESERVED_MINIMUM - 5;
    await expect(deploy()).rejects.toThrow(/Concurrent executions/);
    aws.state.concurrentExecutions = aws.state.unreservedConcurrentExecutions = 1000;
  });

  it('refuses to move a deployed queue, unless the operator says so for that stage', async () => {
    aws.state.parameters[queueParameterName('jobs-scheduler', 'production')] = 'postgres';
    await expect(deploy()).rejects.toThrow(/runs its queue on postgres; infra\/settings.ts now says redis/);
    await expect(deploy()).rejects.toThrow(/JOBS_ALLOW_QUEUE_SWITCH=production/);
    expect(declaredSoFar()).toBe(0);
    uninstallSstGlobals();
    process.env.JOBS_ALLOW_QUEUE_SWITCH = 'production';
    try {
      const { graph } = await deploy();
      graph.one('sst.aws.Redis', 'Redis');
    } finally {
      delete process.env.JOBS_ALLOW_QUEUE_SWITCH;
      delete aws.state.parameters[queueParameterName('jobs-scheduler', 'production')];
    }
  });
});
