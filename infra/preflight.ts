/**
 * Checks that run first in sst.config.ts `run()`, before any resource is declared, so a deploy that cannot succeed
 * fails before it changes anything:
 * - the account's Lambda concurrency quota ("Concurrent executions") leaves AWS's 100 unreserved slots beside what
 *   this app reserves (new accounts often start at 10; PutFunctionConcurrency would fail halfway through the deploy);
 * - the stage's queue stays where it is deployed (the committed setting moved, infra/settings.ts).
 * They call AWS with the deployer's credentials, the ones SST hands the program (SST_AWS_*), in its region; each
 * client honours the SDK's AWS_ENDPOINT_URL_<SERVICE> (the tests point them at a local fake of both APIs).
 * No SST globals here.
 */
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { API_RESERVED_CONCURRENCY, MIGRATE_RESERVED_CONCURRENCY, TICK_RESERVED_CONCURRENCY, budgetFor } from './budget';
import type { StageSettings } from './settings';

/** Lambda refuses reservations that leave fewer unreserved concurrent executions than this in the account. */
export const UNRESERVED_MINIMUM = 100;

/** Concurrency the stage's functions reserve (infra/budget.ts). */
export function reservedConcurrency(queue: StageSettings['queue']): number {
  return (
    API_RESERVED_CONCURRENCY +
    budgetFor(queue).workerReserved +
    TICK_RESERVED_CONCURRENCY +
    MIGRATE_RESERVED_CONCURRENCY
  );
}

class PreflightError extends Error {
  override readonly name = 'PreflightError';
}

function clientConfig() {
  const env = process.env;
  return {
    region: env.SST_AWS_REGION || env.AWS_REGION || undefined,
    credentials: env.SST_AWS_ACCESS_KEY_ID
      ? {
          accessKeyId: env.SST_AWS_ACCESS_KEY_ID,
          secretAccessKey: env.SST_AWS_SECRET_ACCESS_KEY ?? '',
          sessionToken: env.SST_AWS_SESSION_TOKEN || undefined,
        }
      : undefined,
    maxAttempts: 3,
  };
}

/**
 * Refuses an account whose quota cannot hold the reservations plus the unreserved minimum. Other functions'
 * reservations count too: the check uses what is unreserved now, giving back what this stage already reserves.
 */
async function checkConcurrencyQuota(options: {
  required: number;
  /** What this stage's functions reserve today (0 on a first deploy). */
  alreadyReserved?: number;
  client?: LambdaClient;
}): Promise<{ limit: number; unreserved: number }> {
  const client = options.client ?? new LambdaClient(clientConfig());
  const { AccountLimit } = await client.send(new GetAccountSettingsCommand({}));
  const limit = AccountLimit?.ConcurrentExecutions ?? 0;
  const unreserved = AccountLimit?.UnreservedConcurrentExecutions ?? limit;
  const available = unreserved + (options.alreadyReserved ?? 0) - UNRESERVED_MINIMUM;
  if (limit < options.required + UNRESERVED_MINIMUM || available < options.required) {
    throw new PreflightError(
      [
        `This app reserves ${options.required} concurrent Lambda executions, and AWS keeps ${UNRESERVED_MINIMUM} unreserved:`,
        `the account's quota "Concurrent executions" (AWS Lambda, quota code L-B99A9384) is ${limit}, ${unreserved} of it unreserved now.`,
        `Raise it to at least ${options.required + UNRESERVED_MINIMUM + (limit - unreserved - (options.alreadyReserved ?? 0))}: Service Quotas console > AWS services > AWS Lambda > Concurrent executions > Request increase,`,
        `or: aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000.`,
        'Nothing was changed.',
      ].join('\n'),
    );
  }
  return { limit, unreserved };
}

/** The SSM parameter that records where a deployed stage's queue lives (infra/queue-record.ts writes it). */
export function queueParameterName(app: string, stage: string): string {
  return `/${app}/${stage}/queue-backend`;
}

/** Refuses a deploy that would move the stage's queue; returns the deployed queue (null: never deployed). */
async function checkQueueUnchanged(options: {
  app: string;
  stage: string;
  queue: StageSettings['queue'];
  /** JOBS_ALLOW_QUEUE_SWITCH names this stage: the operator drained it (docs/deploy-aws.md). */
  allowSwitch?: boolean;
  client?: SSMClient;
}): Promise<StageSettings['queue'] | null> {
  const client = options.client ?? new SSMClient(clientConfig());
  let deployed: string | null;
  try {
    const { Parameter } = await client.send(
      new GetParameterCommand({ Name: queueParameterName(options.app, options.stage) }),
    );
    deployed = Parameter?.Value ?? null;
  } catch (error) {
    if (error instanceof ParameterNotFound || (error as { name?: string }).name === 'ParameterNotFound') return null;
    throw error;
  }
  if (deployed !== null && deployed !== options.queue && !options.allowSwitch) {
    throw new PreflightError(
      [
        `Stage "${options.stage}" runs its queue on ${deployed}; infra/settings.ts now says ${options.queue}.`,
        `Deploying would ${options.queue === 'redis' ? 'add ElastiCache and move the queue there' : 'delete ElastiCache with the queue in it'}.`,
        `To move it on purpose, pause the lanes and let the stage drain (docs/deploy-aws.md, "Moving a stage's queue"), then deploy with JOBS_ALLOW_QUEUE_SWITCH=${options.stage}.`,
        'Nothing was changed.',
      ].join('\n'),
    );
  }
  return deployed === 'redis' || deployed === 'postgres' ? deployed : null;
}

/**
 * Both checks for `stage`. `alreadyReserved` is what the deployed stage reserves: its queue's budget when it is
 * deployed, none on a first deploy.
 */
export async function preflight(options: {
  app: string;
  stage: string;
  settings: StageSettings;
  env?: NodeJS.ProcessEnv;
}): Promise<void> {
  const env = options.env ?? process.env;
  const deployed = await checkQueueUnchanged({
    app: options.app,
    stage: options.stage,
    queue: options.settings.queue,
    allowSwitch: env.JOBS_ALLOW_QUEUE_SWITCH === options.stage,
  });
  await checkConcurrencyQuota({
    required: reservedConcurrency(options.settings.queue),
    alreadyReserved: deployed === null ? 0 : reservedConcurrency(deployed),
  });
}
