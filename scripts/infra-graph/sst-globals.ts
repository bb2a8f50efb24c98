/**
 * Stand-ins for the SST globals ($config, $app, $dev, sst.*, aws.*, $interpolate, ...) that record every
 * component constructed, with its name and args, so a test can assert the resource graph of sst.config.ts
 * without AWS, Pulumi or `sst install`. Outputs are always known here: a FakeOutput holds its value.
 *
 * @example
 * const { graph, outputs } = await evaluateSstConfig({ stage: "production", dev: false });
 * graph.one("sst.aws.Function", "Worker").args.timeout // "900 seconds"
 */
import { startFakeAws, type FakeAws } from './fake-aws';

/** Component args are whatever the infra code passed; tests read them field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the infra's args are of every SST component's type
export type Args = Record<string, any>;

/** One constructed component, or one call of a method that creates resources (route, subscribe). */
export interface Recorded {
  kind: string;
  name: string;
  args: Args;
  opts: unknown;
  instance: object;
}

/** The values a deployed stage would report; passwords carry URL delimiters on purpose. */
export const FAKE = {
  postgres: {
    instanceHost: 'database.instance.rds.test',
    proxyHost: 'database.proxy.rds.test',
    port: 5432,
    username: 'postgres',
    password: 'pg/Pa55:word',
    database: 'jobs_scheduler',
  },
  redis: {
    host: 'redis.cache.test',
    port: 6379,
    username: 'default',
    password: 'r3d!s#auth&token^<>-',
  },
  apiUrl: 'https://api.execute-api.test',
};

/** A resolved stand-in for a Pulumi Output. */
export class FakeOutput<T> {
  constructor(readonly value: T) {}

  apply<U>(fn: (value: T) => U | FakeOutput<U>): FakeOutput<U> {
    return fakeOutput(fn(this.value));
  }
}

function fakeOutput<T>(value: T | FakeOutput<T>): FakeOutput<T> {
  return value instanceof FakeOutput ? value : new FakeOutput(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** Unwraps FakeOutputs, also inside plain objects and arrays (like Pulumi's `output()`); instances stay. */
export function resolve(value: unknown): unknown {
  if (value instanceof FakeOutput) return resolve(value.value);
  if (Array.isArray(value)) return value.map(resolve);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
  return value;
}

export interface Scenario {
  stage: string;
  /** true for `sst dev`, false for `sst deploy`. */
  dev: boolean;
  /** The AWS account the preflight asks (default: one with a quota of 1,000 and nothing deployed). */
  aws?: FakeAws;
  /**
   * Forgets the module cache so the infra files run again (vitest's `vi.resetModules`). Without it, one evaluation
   * per process: a second would reuse the first's infra modules.
   */
  resetModules?: () => void;
}

let evaluated = false;

let defaultAws: Promise<FakeAws> | null = null;

let recorded: Recorded[] = [];

let scenario: Scenario | undefined;

function currentScenario(): Scenario {
  if (!scenario) throw new Error('evaluateSstConfig() sets the scenario first');
  return scenario;
}

/** Records itself on construction; subclasses name their kind and add the outputs the infra reads. */
class FakeComponent {
  static kind = 'component';
  /** Whether this component was built under `sst dev`; captured so later scenarios do not leak in. */
  protected readonly devMode: boolean;

  constructor(
    readonly logicalName: string,
    readonly args: Args = {},
    opts?: unknown,
  ) {
    this.devMode = currentScenario().dev;
    const kind = (new.target as typeof FakeComponent).kind;
    recorded.push({ kind, name: logicalName, args, opts, instance: this });
  }

  /** The physical name the way SST derives it: app, stage and logical name. */
  protected physicalName() {
    return fakeOutput(`jobs-scheduler-${currentScenario().stage}-${this.logicalName}`);
  }

  /** The dev block, when this component runs against a local server under `sst dev`. */
  protected get local(): Args | undefined {
    return this.devMode ? this.args.dev : undefined;
  }
}

/**
 * Applies a component's `transform.<child>` hook the way SST's `transform()` helper does (a function mutates the
 * args and options; an object is merged over them) and records the child resource with the result.
 */
function recordChild(kind: string, name: string, defaults: Args, hook: unknown): Args {
  const args: Args = { ...defaults };
  const opts: Record<string, unknown> = {};
  if (typeof hook === 'function') hook(args, opts, name);
  else if (hook) Object.assign(args, hook);
  recorded.push({ kind, name, args, opts, instance: {} });
  return args;
}

/** Records a method call that creates resources (a route, a subscription) like a component. */
function recordCall(kind: string, name: string, args: Args) {
  recorded.push({ kind, name, args, opts: undefined, instance: {} });
  return {};
}

function plainComponent(kind: string) {
  return class extends FakeComponent {
    static override kind = kind;
  };
}

/**
 * sst.aws.Vpc (SST 4.17 components/aws/vpc.ts): `az` zones (two by default); with `nat: 'ec2'` (or `nat.ec2`) a NAT
 * security group that accepts everything from 0.0.0.0/0 and a NAT instance per zone whose image is the newest
 * `fck-nat-al2023-*` unless `nat.ec2.ami` names one (createNatInstances). Those children are recorded with their
 * transforms applied; `nodes.natInstances` lists one instance per zone.
 */
class FakeVpc extends FakeComponent {
  static override kind = 'sst.aws.Vpc';
  private readonly natInstanceIds: string[] = [];
  constructor(name: string, args: Args = {}, opts?: unknown) {
    super(name, args, opts);
    const zones = Number(resolve(args.az) ?? 2);
    const nat = resolve(args.nat) as unknown;
    const ec2 =
      nat === 'ec2' ? {} : typeof nat === 'object' && nat !== null ? (nat as { ec2?: Args; type?: string }) : null;
    const natEc2 = ec2 && (nat === 'ec2' || (ec2 as { type?: string }).type === 'ec2' || 'ec2' in ec2) ? ec2 : null;
    if (natEc2) {
      const sg = recordChild(
        'aws.ec2.SecurityGroup',
        `${name}NatInstanceSecurityGroup`,
        {
          ingress: [{ protocol: '-1', fromPort: 0, toPort: 0, cidrBlocks: ['0.0.0.0/0'] }],
          egress: [{ protocol: '-1', fromPort: 0, toPort: 0, cidrBlocks: ['0.0.0.0/0'] }],
        },
        args.transform?.natSecurityGroup,
      );
      const ami = (natEc2 as { ec2?: Args }).ec2?.ami ?? NEWEST_FCK_NAT;
      for (let i = 1; i <= zones; i++) {
        this.natInstanceIds.push(`i-nat-${i}`);
        recordChild(
          'aws.ec2.Instance',
          `${name}NatInstance${i}`,
          { instanceType: (natEc2 as { ec2?: Args }).ec2?.instance ?? 't4g.nano', ami, securityGroup: sg },
          args.transform?.natInstance,
        );
      }
    }
  }
  get nodes() {
    return { natInstances: fakeOutput(this.natInstanceIds.map((id) => ({ id: fakeOutput(id) }))) };
  }
  /** Cloud Map's private DNS namespace the component creates for service discovery (a Route 53 hosted zone). */
  private readonly cloudmap = recordChild(
    'aws.servicediscovery.PrivateDnsNamespace',
    `${this.logicalName}CloudmapNamespace`,
    { vpc: this.logicalName },
    undefined,
  );
  get privateSubnets() {
    return fakeOutput(['subnet-private-1', 'subnet-private-2']);
  }
  get publicSubnets() {
    return fakeOutput(['subnet-public-1', 'subnet-public-2']);
  }
  get securityGroups() {
    return fakeOutput(['sg-vpc-default']);
  }
}

/** What the Vpc component's image lookup returns when no `ami` is given: whatever fck-nat published last. */
export const NEWEST_FCK_NAT = 'ami-newest-fck-nat-of-the-day';

class FakePostgres extends FakeComponent {
  static override kind = 'sst.aws.Postgres';
  /**
   * Not in `sst dev` (a dev block links to a local server): the rds.Instance the component creates (components/aws/
   * postgres.ts createInstance: 20 GB gp3 to start, `storage` as the autoscaling maximum, `multiAz` default false,
   * seven days of backups), with `transform.instance` applied.
   */
  constructor(name: string, args: Args = {}, opts?: unknown) {
    super(name, args, opts);
    if (this.local) return;
    const storage = Number(/^(\d+)\s*GB$/.exec(String(resolve(args.storage) ?? '20 GB'))?.[1] ?? NaN);
    recordChild(
      'aws.rds.Instance',
      `${name}Instance`,
      {
        instanceClass: `db.${String(resolve(args.instance) ?? 't4g.micro')}`,
        storageType: 'gp3',
        allocatedStorage: 20,
        maxAllocatedStorage: storage,
        multiAz: resolve(args.multiAz) ?? false,
        backupRetentionPeriod: 7,
        skipFinalSnapshot: true,
      },
      args.transform?.instance,
    );
    // With `proxy`, an RDS Proxy (billed per vCPU of the instance) and the Secrets Manager secrets it reads: the
    // master user's and one per extra user in `proxy.credentials` (createProxy).
    const proxy = resolve(args.proxy) as boolean | { credentials?: { username: unknown }[] } | undefined;
    if (proxy) {
      recordChild('aws.secretsmanager.Secret', `${name}ProxySecret`, {}, undefined);
      for (const credential of proxy === true ? [] : (proxy.credentials ?? []))
        recordChild('aws.secretsmanager.Secret', `${name}ProxySecret${String(credential.username)}`, {}, undefined);
      recordChild(
        'aws.rds.Proxy',
        `${name}Proxy`,
        { instanceClass: `db.${String(resolve(args.instance) ?? 't4g.micro')}` },
        args.transform?.proxy,
      );
    }
  }
  // Like the component: the proxy endpoint when the proxy is on, the dev block in `sst dev`.
  get host() {
    if (this.local) return fakeOutput(this.local.host ?? 'localhost');
    return fakeOutput(resolve(this.args.proxy) ? FAKE.postgres.proxyHost : FAKE.postgres.instanceHost);
  }
  get port() {
    return fakeOutput(this.local ? (this.local.port ?? 5432) : FAKE.postgres.port);
  }
  get username() {
    return fakeOutput(this.local?.username ?? this.args.username ?? FAKE.postgres.username);
  }
  get password() {
    return fakeOutput(this.local ? (this.local.password ?? this.args.password ?? '') : FAKE.postgres.password);
  }
  get database() {
    return fakeOutput(this.local?.database ?? this.args.database ?? FAKE.postgres.database);
  }
  get nodes() {
    return {
      instance: this.local
        ? undefined
        : {
            address: fakeOutput(FAKE.postgres.instanceHost),
            identifier: fakeOutput(
              `jobs-scheduler-${currentScenario().stage}-${this.logicalName.toLowerCase()}instance`,
            ),
          },
    };
  }
}

class FakeRedis extends FakeComponent {
  static override kind = 'sst.aws.Redis';
  private group: Args | undefined;
  /**
   * Not in `sst dev`: the ReplicationGroup and ParameterGroup the component creates (components/aws/redis.ts
   * createCluster, createParameterGroup: cluster mode with `cluster.nodes` node groups and no replica, multi-AZ off,
   * no snapshots; `parameters` added to the group), with `transform.cluster` / `transform.parameterGroup` applied.
   */
  constructor(name: string, args: Args = {}, opts?: unknown) {
    super(name, args, opts);
    if (this.local) return;
    const cluster = resolve(args.cluster) as { nodes?: number } | false | undefined;
    this.group = recordChild(
      'aws.elasticache.ReplicationGroup',
      `${name}Cluster`,
      {
        engine: resolve(args.engine) ?? 'redis',
        nodeType: `cache.${String(resolve(args.instance) ?? 't4g.micro')}`,
        ...(cluster === false
          ? { clusterMode: 'disabled' }
          : {
              clusterMode: 'enabled',
              numNodeGroups: cluster?.nodes ?? 1,
              replicasPerNodeGroup: 0,
              automaticFailoverEnabled: true,
            }),
        multiAzEnabled: false,
      },
      args.transform?.cluster,
    );
    recordChild(
      'aws.elasticache.ParameterGroup',
      `${name}ParameterGroup`,
      {
        parameters: [
          { name: 'cluster-enabled', value: cluster === false ? 'no' : 'yes' },
          ...Object.entries((resolve(args.parameters) ?? {}) as Record<string, string>).map(([n, value]) => ({
            name: n,
            value,
          })),
        ],
      },
      args.transform?.parameterGroup,
    );
  }
  /**
   * The replication group: its node type and member clusters, named as ElastiCache names them in cluster mode
   * (`<group>-<shard>-<node>`), one per node of each shard, replicas included.
   */
  get nodes() {
    if (this.devMode) throw new Error('Cannot access `nodes.cluster` in dev mode.');
    const group = this.group!;
    const id = `jobs-scheduler-${currentScenario().stage}-${this.logicalName.toLowerCase()}`;
    const shards = Number(resolve(group.numNodeGroups) ?? 1);
    const perShard = 1 + Number(resolve(group.replicasPerNodeGroup) ?? 0);
    const members = Array.from({ length: shards }, (_, s) =>
      Array.from(
        { length: perShard },
        (_, n) => `${id}-${String(s + 1).padStart(4, '0')}-${String(n + 1).padStart(3, '0')}`,
      ),
    ).flat();
    return {
      cluster: { id: fakeOutput(id), nodeType: fakeOutput(group.nodeType), memberClusters: fakeOutput(members) },
    };
  }
  get host() {
    return fakeOutput(this.local ? (this.local.host ?? 'localhost') : FAKE.redis.host);
  }
  get port() {
    return fakeOutput(this.local ? (this.local.port ?? 6379) : FAKE.redis.port);
  }
  get username() {
    return fakeOutput(this.local?.username ?? FAKE.redis.username);
  }
  get password() {
    return fakeOutput(this.local ? (this.local.password ?? '') : FAKE.redis.password);
  }
}

class FakeSecret extends FakeComponent {
  static override kind = 'sst.Secret';
  constructor(name: string, placeholder?: unknown) {
    super(name, { placeholder });
  }
  get value() {
    return fakeOutput(`value-of-secret-${this.logicalName}`);
  }
}

/** sst.Linkable: properties a function's `link` carries into its bundle (encrypted), nothing in AWS. */
class FakeLinkable extends FakeComponent {
  static override kind = 'sst.Linkable';
  get properties() {
    return this.args.properties as Args;
  }
}

class FakeBus extends FakeComponent {
  static override kind = 'sst.aws.Bus';
  get name() {
    return this.physicalName();
  }
  get arn() {
    return fakeOutput(
      `arn:aws:events:us-east-1:123456789012:event-bus/jobs-scheduler-${currentScenario().stage}-${this.logicalName}`,
    );
  }
  subscribe(name: string, subscriber: unknown, args: Args = {}) {
    return recordCall('sst.aws.Bus.subscribe', name, { ...args, bus: this, subscriber });
  }
}

class FakeFunction extends FakeComponent {
  static override kind = 'sst.aws.Function';
  get name() {
    return this.physicalName();
  }
  get arn() {
    return fakeOutput(`arn:aws:lambda:us-east-1:123456789012:function:${this.logicalName}`);
  }
}

/**
 * sst.aws.ApiGatewayV2: the HTTP API and its `$default` stage (components/aws/apigatewayv2.ts createStage: auto-deploy,
 * access logs, no throttling of its own), with `transform.stage` applied.
 */
class FakeApiGatewayV2 extends FakeComponent {
  static override kind = 'sst.aws.ApiGatewayV2';
  constructor(name: string, args: Args = {}, opts?: unknown) {
    super(name, args, opts);
    recordChild(
      'aws.apigatewayv2.Stage',
      `${name}Stage`,
      { apiId: this.nodes.api.id, autoDeploy: true, name: '$default' },
      args.transform?.stage,
    );
  }
  get nodes() {
    return { api: { id: fakeOutput(`api-${this.logicalName.toLowerCase()}`) } };
  }
  get url() {
    return fakeOutput(FAKE.apiUrl);
  }
  route(route: string, handler: unknown, args: Args = {}) {
    return recordCall('sst.aws.ApiGatewayV2.route', route, { ...args, api: this, handler });
  }
}

class FakeCluster extends FakeComponent {
  static override kind = 'sst.aws.Cluster';
  get nodes() {
    return { cluster: { name: this.physicalName() } };
  }
}

class FakeService extends FakeComponent {
  static override kind = 'sst.aws.Service';
  /**
   * Not in `sst dev`: the task definition and ecs.Service the component creates (components/aws/service.ts
   * createService: desiredCount = scaling.min, in an SST VPC the public subnets with a public IP, ECS's deployment
   * defaults since it sets neither percent, circuit breaker with rollback, `wait` as waitForSteadyState;
   * fargate.ts: architecture x86_64 unless `architecture` says arm64), with their transforms applied.
   */
  constructor(name: string, args: Args = {}, opts?: unknown) {
    super(name, args, opts);
    if (this.devMode) return;
    const vpc = (args.cluster as { args?: Args } | undefined)?.args?.vpc as FakeVpc | undefined;
    recordChild(
      'aws.ecs.TaskDefinition',
      `${name}Task`,
      {
        cpu: String(resolve(args.cpu) ?? '0.25 vCPU'),
        memory: String(resolve(args.memory) ?? '0.5 GB'),
        runtimePlatform: {
          operatingSystemFamily: 'LINUX',
          cpuArchitecture: resolve(args.architecture) === 'arm64' ? 'ARM64' : 'X86_64',
        },
      },
      undefined,
    );
    recordChild(
      'aws.ecs.Service',
      `${name}Service`,
      {
        desiredCount: (resolve(args.scaling) as { min?: number } | undefined)?.min ?? 1,
        launchType: 'FARGATE',
        networkConfiguration: {
          assignPublicIp: vpc instanceof FakeVpc,
          subnets: vpc?.publicSubnets,
          securityGroups: vpc?.securityGroups,
        },
        deploymentCircuitBreaker: { enable: true, rollback: true },
        waitForSteadyState: resolve(args.wait) ?? false,
      },
      args.transform?.service,
    );
  }
  get nodes() {
    if (this.devMode) throw new Error('Cannot access `nodes.autoScalingTarget` in dev mode.');
    return {
      autoScalingTarget: {
        serviceNamespace: fakeOutput('ecs'),
        scalableDimension: fakeOutput('ecs:service:DesiredCount'),
        resourceId: fakeOutput(`service/jobs-scheduler-${currentScenario().stage}-Cluster/${this.logicalName}`),
      },
    };
  }
}

/** A resource with an ARN (SSM parameters, scaling policies), named after its kind and logical name. */
function arnComponent(kind: string) {
  return class extends FakeComponent {
    static override kind = kind;
    get arn() {
      return fakeOutput(`arn:aws:${kind}:us-east-1:123456789012:${this.logicalName}`);
    }
  };
}

/** A namespace that fails loudly when the infra uses something this file has no stand-in for. */
function strictNamespace(path: string, members: Record<string, unknown>): Record<string, unknown> {
  return new Proxy(members, {
    get(target, key) {
      if (typeof key === 'string' && !(key in target)) throw new Error(`no stand-in for ${path}.${key}`);
      return Reflect.get(target, key);
    },
  });
}

function interpolate(strings: TemplateStringsArray, ...values: unknown[]) {
  return fakeOutput(
    strings.reduce((text, part, i) => text + part + (i < values.length ? String(resolve(values[i])) : ''), ''),
  );
}

const GLOBAL_NAMES = ['$config', '$app', '$dev', '$interpolate', '$output', '$resolve', 'sst', 'aws'] as const;

function installSstGlobals(current: Scenario) {
  scenario = current;
  recorded = [];
  const sst = strictNamespace('sst', {
    Secret: FakeSecret,
    Linkable: FakeLinkable,
    aws: strictNamespace('sst.aws', {
      Vpc: FakeVpc,
      Postgres: FakePostgres,
      Redis: FakeRedis,
      Bus: FakeBus,
      Function: FakeFunction,
      ApiGatewayV2: FakeApiGatewayV2,
      Cron: plainComponent('sst.aws.Cron'),
      Cluster: FakeCluster,
      Service: FakeService,
    }),
    x: strictNamespace('sst.x', { DevCommand: plainComponent('sst.x.DevCommand') }),
  });
  const aws = strictNamespace('aws', {
    lambda: strictNamespace('aws.lambda', { Invocation: plainComponent('aws.lambda.Invocation') }),
    ssm: strictNamespace('aws.ssm', { Parameter: arnComponent('aws.ssm.Parameter') }),
    ec2: strictNamespace('aws.ec2', {
      getAmiOutput: (args: Args) => {
        recordCall('aws.ec2.getAmi', 'getAmi', args);
        return { id: fakeOutput(`ami-pinned-${String(resolve(args.filters?.[0]?.values?.[0]))}`) };
      },
    }),
    appautoscaling: strictNamespace('aws.appautoscaling', { Policy: arnComponent('aws.appautoscaling.Policy') }),
    cloudwatch: strictNamespace('aws.cloudwatch', { MetricAlarm: arnComponent('aws.cloudwatch.MetricAlarm') }),
    sns: strictNamespace('aws.sns', { Topic: arnComponent('aws.sns.Topic') }),
  });
  Object.assign(globalThis, {
    $config: (config: unknown) => config,
    $dev: current.dev,
    $interpolate: interpolate,
    $output: fakeOutput,
    $resolve: (values: unknown) => fakeOutput(resolve(values)),
    sst,
    aws,
  });
}

/** How many resources the last evaluation declared, also when it failed part way (a preflight failure: none). */
export function declaredSoFar(): number {
  return recorded.length;
}

/** Removes every global installed by evaluateSstConfig(). */
export function uninstallSstGlobals() {
  for (const name of GLOBAL_NAMES) Reflect.deleteProperty(globalThis, name);
  scenario = undefined;
}

/** The components one evaluation constructed. */
export class ResourceGraph {
  constructor(readonly recorded: readonly Recorded[]) {}

  all(kind: string): Recorded[] {
    return this.recorded.filter((r) => r.kind === kind);
  }

  one(kind: string, name: string): Recorded {
    const found = this.recorded.filter((r) => r.kind === kind && r.name === name);
    if (found.length !== 1) {
      const known = this.all(kind).map((r) => r.name);
      throw new Error(`expected one ${kind} "${name}", found ${found.length} (have: ${known.join(', ') || 'none'})`);
    }
    return found[0]!;
  }
}

interface AppConfig {
  name: string;
  home: string;
  removal?: string;
  protect?: boolean;
}

interface SstConfig {
  app(input: { stage: string }): AppConfig | Promise<AppConfig>;
  run(): Promise<Record<string, unknown> | void>;
}

/**
 * Evaluates sst.config.ts the way the SST CLI does: app() for the stage, then run() with $app set.
 * Modules are reset first, so the infra files run again for every scenario.
 */
export async function evaluateSstConfig(current: Scenario) {
  if (current.resetModules) current.resetModules();
  else if (evaluated) throw new Error('evaluateSstConfig: a second evaluation needs `resetModules`');
  evaluated = true;
  installSstGlobals(current);
  // A computed specifier keeps tsc (main tsconfig) from type-checking sst.config.ts without SST's types.
  const specifier = new URL('../../sst.config.ts', import.meta.url).href;
  const config = ((await import(specifier)) as { default: SstConfig }).default;
  const app = await config.app({ stage: current.stage });
  Object.assign(globalThis, {
    $app: {
      name: app.name,
      stage: current.stage,
      removal: app.removal ?? 'retain',
      protect: app.protect ?? false,
      providers: {},
    },
  });
  const aws = current.aws ?? (await (defaultAws ??= startFakeAws().then((fake) => fake.unref())));
  const saved = Object.fromEntries(Object.keys(aws.env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, aws.env);
  try {
    const outputs = (await config.run()) ?? {};
    return { app, outputs, graph: new ResourceGraph(recorded) };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
