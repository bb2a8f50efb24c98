/** Workers: the short-lane Lambda woken by "work-available" events, and the Fargate service for both lanes. */
import {
  CONTAINER_DEPLOY_MAX_PERCENT,
  CONTAINER_DEPLOY_MIN_HEALTHY_PERCENT,
  CONTAINER_MAX_TASKS,
  budgetFor,
} from './budget';
import { containerSecrets } from './data';
import { bus, publishToBus, workAvailable } from './events';
import { afterMigration, migration, releaseEnvironment } from './migrate';
import { vpc } from './network';
import { isProduction, queueBackend, settings } from './stage';
import {
  CONTAINER_SHUTDOWN_GRACE_SECONDS,
  CONTAINER_STOP_TIMEOUT_SECONDS,
  CONTAINER_WORKER_CONCURRENCY,
  LAMBDA_SHUTDOWN_GRACE_SECONDS,
  LAMBDA_WORKER_CONCURRENCY,
  TICK_INTERVAL_SECONDS,
  WORKER_LAMBDA_TIMEOUT_SECONDS,
  lambdaDefaults,
  seconds,
  sharedEnvironment,
  storeLinks,
} from './runtime';
import { containerTargetSecrets, httpSigningSecret } from './signing';
import { LAMBDA_TARGETS, invokePermissions } from './targets';
import { scaleOnQueueMetrics } from './worker-scaling';

/** Worker Lambdas and task pools sized for this stage's queue (its LISTEN connections count on PostgreSQL). */
const budget = budgetFor(queueBackend);

export const workerFunction = new sst.aws.Function('Worker', {
  ...lambdaDefaults,
  handler: 'functions/worker.handler',
  timeout: `${WORKER_LAMBDA_TIMEOUT_SECONDS} seconds`,
  memory: settings.workerMemory,
  // Bounds the fleet, and with it the connections it holds (infra/budget.ts).
  concurrency: { reserved: budget.workerReserved },
  // A wake-up is only a hint: the next tick sends another and the reaper recovers leases,
  // so retrying a failed drain would only add load.
  retries: 0,
  link: [...storeLinks, httpSigningSecret],
  permissions: [publishToBus, ...invokePermissions(LAMBDA_TARGETS)],
  environment: {
    ...sharedEnvironment,
    WORKER_LANES: 'short',
    WORKER_CONCURRENCY: String(LAMBDA_WORKER_CONCURRENCY),
    SHUTDOWN_GRACE: seconds(LAMBDA_SHUTDOWN_GRACE_SECONDS),
    ...releaseEnvironment,
  },
  transform: {
    function: afterMigration,
    // A wake-up throttled at the reserved concurrency waits at most two ticks; later ticks send fresh ones.
    eventInvokeConfig: { maximumEventAgeInSeconds: 2 * TICK_INTERVAL_SECONDS },
  },
});

export const workAvailableSubscription = bus.subscribe('WorkAvailable', workerFunction, {
  pattern: { source: [workAvailable.source], detailType: [workAvailable.detailType] },
});

export const cluster = new sst.aws.Cluster('Cluster', { vpc });

/** Task scale-in protection through the ECS agent (functions/task-protection.ts) runs under the task role. */
const protectTask = {
  actions: ['ecs:UpdateTaskProtection', 'ecs:GetTaskProtection'],
  resources: [$interpolate`arn:aws:ecs:*:*:task/${cluster.nodes.cluster.name}/*`],
};

const databaseSecrets = containerSecrets({ dependsOn: migration ? [migration] : [] });

export const workerService = new sst.aws.Service('ContainerWorker', {
  cluster,
  image: { context: '.', dockerfile: 'infra/worker.Dockerfile' },
  // Graviton: about 20% cheaper than x86 for the same size; the image builds its supervisor for it.
  architecture: 'arm64',
  cpu: settings.containerCpu,
  memory: settings.containerMemory,
  // Not linked: a Service puts linked values into the task's plain environment. The passwords come from SSM.
  permissions: [publishToBus, protectTask, ...invokePermissions(LAMBDA_TARGETS)],
  ssm: databaseSecrets && { ...databaseSecrets, ...containerTargetSecrets },
  environment: {
    // In `sst dev` the worker runs locally, against servers without passwords; deployed, ECS injects both from SSM.
    ...($dev ? sharedEnvironment : withoutUrls(sharedEnvironment)),
    DATABASE_POOL_MAX: String(budget.containerPoolMax),
    WORKER_LANES: 'long,short',
    WORKER_CONCURRENCY: String(CONTAINER_WORKER_CONCURRENCY),
    SHUTDOWN_GRACE: seconds(CONTAINER_SHUTDOWN_GRACE_SECONDS),
    ...releaseEnvironment,
  },
  // At least one container always runs: the long lane has no Lambda fallback. Scaling follows the queue metrics
  // the tick publishes (infra/worker-scaling.ts), not CPU or memory: sleeping or I/O-bound work uses neither.
  scaling: { min: 1, max: CONTAINER_MAX_TASKS, cpuUtilization: false, memoryUtilization: false },
  // `sst deploy` waits for the service to be stable, so a crash-looping image fails the deploy it rolled back.
  wait: isProduction,
  // `sst dev` runs the same entry point locally instead of deploying the container.
  dev: { command: 'npm run worker' },
  transform: {
    service: (args, opts) => {
      afterMigration(args, opts);
      // A deployment starts a new task before it stops an old one: at the minimum of one task, 200% lets ECS start
      // one (it rounds the maximum down) while 100% keeps the old one running (it rounds the minimum up). With 150%
      // it could neither start nor stop a task, and a deploy that waits for the service would hang. The connection
      // budget counts the peak.
      args.deploymentMaximumPercent = CONTAINER_DEPLOY_MAX_PERCENT;
      args.deploymentMinimumHealthyPercent = CONTAINER_DEPLOY_MIN_HEALTHY_PERCENT;
      // The component puts tasks of an SST VPC in its public subnets, each with a public IPv4 address (billed, and
      // the source address HTTP targets would see). In the private subnets their traffic leaves through the NAT.
      args.networkConfiguration = {
        assignPublicIp: false,
        subnets: vpc.privateSubnets,
        securityGroups: vpc.securityGroups,
      };
    },
    taskDefinition: withStopTimeout,
  },
});

if (!$dev)
  scaleOnQueueMetrics(workerService.nodes.autoScalingTarget, { attemptsPerTask: CONTAINER_WORKER_CONCURRENCY });

function withoutUrls<T extends { DATABASE_URL: unknown; REDIS_URL?: unknown }>({
  DATABASE_URL: _db,
  REDIS_URL: _redis,
  ...rest
}: T) {
  return rest;
}

/** The Service component has no stopTimeout option; ECS's default of 30 s would cut the drain short. */
function withStopTimeout(args: aws.ecs.TaskDefinitionArgs): undefined {
  args.containerDefinitions = $output(args.containerDefinitions).apply((json) =>
    JSON.stringify(
      (JSON.parse(json) as Record<string, unknown>[]).map((container) => ({
        ...container,
        stopTimeout: CONTAINER_STOP_TIMEOUT_SECONDS,
      })),
    ),
  );
  return undefined;
}
