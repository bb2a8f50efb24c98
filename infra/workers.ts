/** Workers: the short-lane Lambda woken by "work-available" events, and the Fargate service for both lanes. */
import { vpc } from './network';
import { bus, workAvailable } from './events';
import { afterMigration } from './migrate';
import {
  CONTAINER_SHUTDOWN_GRACE_SECONDS,
  CONTAINER_STOP_TIMEOUT_SECONDS,
  LAMBDA_SHUTDOWN_GRACE_SECONDS,
  LAMBDA_WORKER_CONCURRENCY,
  WORKER_LAMBDA_TIMEOUT_SECONDS,
  lambdaDefaults,
  seconds,
  sharedEnvironment,
  sharedLink,
} from './runtime';

export const workerFunction = new sst.aws.Function('Worker', {
  ...lambdaDefaults,
  handler: 'functions/worker.handler',
  timeout: `${WORKER_LAMBDA_TIMEOUT_SECONDS} seconds`,
  // A wake-up is only a hint: the next tick sends another and the reaper recovers leases,
  // so retrying a failed drain would only add load.
  retries: 0,
  link: sharedLink,
  environment: {
    ...sharedEnvironment,
    WORKER_LANES: 'short',
    WORKER_CONCURRENCY: String(LAMBDA_WORKER_CONCURRENCY),
    SHUTDOWN_GRACE: seconds(LAMBDA_SHUTDOWN_GRACE_SECONDS),
  },
  transform: { function: afterMigration },
});

export const workAvailableSubscription = bus.subscribe('WorkAvailable', workerFunction, {
  pattern: { source: [workAvailable.source], detailType: [workAvailable.detailType] },
});

export const cluster = new sst.aws.Cluster('Cluster', { vpc });

export const workerService = new sst.aws.Service('ContainerWorker', {
  cluster,
  image: { context: '.', dockerfile: 'infra/worker.Dockerfile' },
  cpu: '0.5 vCPU',
  memory: '1 GB',
  link: sharedLink,
  environment: {
    ...sharedEnvironment,
    WORKER_LANES: 'long,short',
    WORKER_CONCURRENCY: '8',
    SHUTDOWN_GRACE: seconds(CONTAINER_SHUTDOWN_GRACE_SECONDS),
  },
  // At least one container always runs: the long lane has no Lambda fallback.
  scaling: { min: 1, max: 10, cpuUtilization: 70 },
  // `sst dev` runs the same entry point locally instead of deploying the container.
  dev: { command: 'npm run worker' },
  transform: {
    service: afterMigration,
    taskDefinition: withStopTimeout,
  },
});

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
