/**
 * Per-stage settings, committed: what a stage deploys is decided here, never by the deployer's shell. No SST globals
 * in this file, so `npm run cost` and the tests read it on its own. A stage not listed gets DEFAULT_SETTINGS; each
 * listed stage overrides what it names. Costs of each choice: docs/cost.md (`npm run cost` prints them).
 *
 * @example stageSettings('production').queue // 'redis'
 */

export interface StageSettings {
  /**
   * Where the queue lives: `redis` (ElastiCache) or `postgres` (tables in RDS, no ElastiCache). A deploy that would
   * move a deployed stage's queue is refused before it changes anything (infra/preflight.ts); see docs/deploy-aws.md
   * for the drain-then-switch procedure.
   */
  queue: 'redis' | 'postgres';
  /** RDS with a synchronous standby in a second zone (fails over in about a minute; doubles the instance price). */
  databaseMultiAz: boolean;
  /** Storage RDS may grow to on its own (it starts at the component's 20 GB; only what is used is billed). */
  databaseMaxStorageGb: number;
  /**
   * RDS Proxy in front of the database. Off: the connection budget (infra/budget.ts) already caps every client, so
   * the proxy would pool connections that cannot exceed the instance's limit anyway, at about the price of the
   * instance itself (2 vCPU minimum). On: for a stage whose budget is raised past the instance's connections.
   */
  databaseProxy: boolean;
  /** A Redis replica in a second zone with automatic failover (redis queue only). */
  redisReplica: boolean;
  /** Days of daily Redis snapshots kept (0: none; redis queue only). */
  redisSnapshotDays: number;
  /** The container worker's size (Fargate, arm64). */
  containerCpu: '0.25 vCPU' | '0.5 vCPU' | '1 vCPU';
  containerMemory: '0.5 GB' | '1 GB' | '2 GB';
  /**
   * The worker Lambda's memory (and with it its CPU share). Its attempts wait on HTTP targets, commands or sleeps;
   * the runtime's own work per attempt is a few queries: 512 MB, half the component's default, halves the price of
   * every second a woken worker runs.
   */
  workerMemory: '512 MB' | '1024 MB' | '2048 MB';
  /**
   * Transitions published to the EventBridge bus (EVENT_TRANSITIONS): every transition costs a PutEvents entry, so
   * the default is the ones someone acts on; `all` for every transition.
   */
  eventTransitions: string;
  /** A bastion (the first NAT instance) that `sst tunnel` and `sst dev` reach over SSH. */
  bastion: boolean;
}

const DEFAULT_SETTINGS: StageSettings = {
  queue: 'redis',
  databaseMultiAz: false,
  databaseMaxStorageGb: 100,
  databaseProxy: false,
  redisReplica: false,
  redisSnapshotDays: 0,
  containerCpu: '0.25 vCPU',
  containerMemory: '1 GB',
  workerMemory: '512 MB',
  eventTransitions: 'failed,dead',
  bastion: true,
};

/**
 * Stages with settings of their own.
 * @public The infra tests read it through vi.mock's importOriginal, which knip cannot follow.
 */
export const STAGE_SETTINGS: Record<string, Partial<StageSettings>> = {
  production: {
    // One service fewer: the queue's tables sit in the Multi-AZ database, so they fail over with it, and the stage
    // stays within $60 a month at idle (docs/cost.md: ElastiCache with its replica would add about $19). Good for a
    // few thousand attempts a second (docs/queues.md); a stage that needs more sets 'redis', which gets the replica
    // and snapshots below. A deployed stage's queue only moves on purpose (infra/preflight.ts).
    queue: 'postgres',
    databaseMultiAz: true,
    databaseMaxStorageGb: 500,
    // Used when the queue is on Redis.
    redisReplica: true,
    redisSnapshotDays: 7,
    // SSH from the internet to a NAT instance has no place in production: reach RDS with an SSM port forward.
    bastion: false,
  },
};

/** The settings of `stage`. */
export function stageSettings(stage: string, stages = STAGE_SETTINGS): StageSettings {
  return { ...DEFAULT_SETTINGS, ...stages[stage] };
}

/**
 * The NAT instances' image, pinned. The component's default looks up the newest `fck-nat-al2023-*` image on every
 * deploy: a new release of it replaces both NAT instances mid-deploy (outbound traffic stops meanwhile), and a
 * lookup that finds nothing fails the deploy. This names one build; fck-nat publishes it under the same name in every
 * region, and deprecated images (AWS deprecates public images after two years) are still found. Change it on purpose:
 * the next deploy replaces the NAT instances, one zone's egress at a time.
 */
export const NAT_IMAGE = { owner: '568608671756', name: 'fck-nat-al2023-hvm-1.4.0-20260126-arm64-ebs' } as const;

/** Availability zones of the VPC (the component's default): one NAT instance, and its health alarm, in each. */
export const VPC_ZONES = 2;

/** The ElastiCache node type (the component's default), without its `cache.` prefix. */
export const REDIS_INSTANCE = 't4g.micro';

/** The NAT instance type (the component's default for `nat: 'ec2'`). */
export const NAT_INSTANCE = 't4g.nano';

/** The component's VPC range (hard-coded in sst.aws.Vpc); the NAT instances forward traffic from it only. */
export const VPC_CIDR = '10.0.0.0/16';
