/**
 * The PostgreSQL connection budget, in one place: every runtime's most connections, and the instance they share.
 * The infra files take their concurrency, pool sizes and container counts from here, and test/infra recomputes the
 * worst case from the resource graph and fails when it exceeds the instance's limit. Raise a number here only with
 * a bigger instance (or check the sum again).
 *
 * Worst case, every stage (an RDS proxy, where a stage turns one on, multiplexes but cannot open more than the instance allows):
 *   API Lambdas (reserved concurrency x 1) + worker Lambdas (reserved x 1) + tick (1) + Migrate (1)
 *   + container tasks at the peak of a deployment (max x DEPLOY_MAX_PERCENT / 100, rounded down as ECS does) x their pool
 *   + on the PostgreSQL queue, one LISTEN connection per worker Lambda and per task (outside the pool: it stays open).
 */

/** The RDS instance class (sst.aws.Postgres `instance`). */
export const DATABASE_INSTANCE = 't4g.micro';

/**
 * `max_connections` by instance class under RDS's default parameter, LEAST(DBInstanceClassMemory / 9531392, 5000).
 * DBInstanceClassMemory is what is left after RDS's own processes, so a 1 GiB class ends up near 80 rather than the
 * 112 the nominal memory gives. Add a class here with the value `SHOW max_connections` reports on it.
 */
export const MAX_CONNECTIONS: Record<string, number> = { 't4g.micro': 80 };

/** Slots kept free: PostgreSQL's superuser_reserved_connections (3), and an operator's psql or `sst tunnel` sessions. */
const RESERVED_CONNECTIONS = 3 + 5;

/** Concurrent API requests (each Lambda container holds one connection); more are throttled by Lambda. */
export const API_RESERVED_CONCURRENCY = 10;
/**
 * The API stage's throttle (API Gateway answers 429 beyond it, before Lambda is asked): a burst no larger than the
 * API's reserved concurrency, so requests arriving at once never meet a throttled Lambda (which API Gateway reports
 * as a 500), and a steady rate those slots serve at up to half a second a request. Equal to the reserved concurrency
 * by design, not by chance: a name of its own for what the stage reads.
 * @alias
 */
export const API_THROTTLE_BURST = API_RESERVED_CONCURRENCY;
export const API_THROTTLE_RATE_PER_SECOND = 2 * API_RESERVED_CONCURRENCY;
/** Worker Lambdas running at once (one connection each); the tick's wake-ups beyond it wait or expire. */
const WORKER_RESERVED_CONCURRENCY = 20;
/** One tick at a time: it never waits behind the 900-second workers for account concurrency. */
export const TICK_RESERVED_CONCURRENCY = 1;
/** One migration run at a time (every deploy invokes it once). */
export const MIGRATE_RESERVED_CONCURRENCY = 1;

/** Container worker tasks at most (the autoscaling maximum); at least one always runs. */
export const CONTAINER_MAX_TASKS = 5;
/** PostgreSQL connections one container worker may open (DATABASE_POOL_MAX). */
const CONTAINER_POOL_MAX = 4;
/**
 * ECS starts new tasks before stopping old ones during a deployment, up to this share of the desired count (rounded
 * down): 200 lets it start one new task even at one task running.
 */
export const CONTAINER_DEPLOY_MAX_PERCENT = 200;
/** Tasks that keep running during a deployment, as a share of the desired count (rounded up): none stops early. */
export const CONTAINER_DEPLOY_MIN_HEALTHY_PERCENT = 100;

/** A pg pool per Lambda container holds this many (functions/lambda.ts). */
const LAMBDA_POOL_MAX = 1;

export interface ConnectionBudget {
  apiReserved: number;
  workerReserved: number;
  tickReserved: number;
  migrateReserved: number;
  containerMaxTasks: number;
  containerPoolMax: number;
  deployMaxPercent: number;
  /** Connections each worker (Lambda or task) holds outside its pool: the PostgreSQL queue's LISTEN connection. */
  listenPerWorker: number;
}

/** The most connections the runtimes can hold at once under `budget`. */
export function worstCaseConnections(budget: ConnectionBudget): number {
  const lambdas =
    (budget.apiReserved + budget.workerReserved + budget.tickReserved + budget.migrateReserved) * LAMBDA_POOL_MAX;
  const tasksAtPeak = Math.floor((budget.containerMaxTasks * budget.deployMaxPercent) / 100);
  return (
    lambdas + tasksAtPeak * budget.containerPoolMax + (budget.workerReserved + tasksAtPeak) * budget.listenPerWorker
  );
}

/** Connections the runtimes may use on `instance`; undefined for a class not in MAX_CONNECTIONS. */
export function usableConnections(instance: string): number | undefined {
  const max = MAX_CONNECTIONS[instance];
  return max === undefined ? undefined : max - RESERVED_CONNECTIONS;
}

export const BUDGET: ConnectionBudget = {
  apiReserved: API_RESERVED_CONCURRENCY,
  workerReserved: WORKER_RESERVED_CONCURRENCY,
  tickReserved: TICK_RESERVED_CONCURRENCY,
  migrateReserved: MIGRATE_RESERVED_CONCURRENCY,
  containerMaxTasks: CONTAINER_MAX_TASKS,
  containerPoolMax: CONTAINER_POOL_MAX,
  deployMaxPercent: CONTAINER_DEPLOY_MAX_PERCENT,
  listenPerWorker: 0,
};

/**
 * The budget of a stage by where its queue lives. On PostgreSQL every worker also LISTENs on a connection of its
 * own, so fewer worker Lambdas run at once and a task's pool is one smaller, to stay within the same instance.
 */
export function budgetFor(queue: 'redis' | 'postgres'): ConnectionBudget {
  if (queue === 'redis') return BUDGET;
  return { ...BUDGET, workerReserved: 10, containerPoolMax: CONTAINER_POOL_MAX - 1, listenPerWorker: 1 };
}
