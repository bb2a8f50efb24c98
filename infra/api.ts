/** The REST API: the Hono Lambda behind an HTTP API (API Gateway v2) `$default` route. */
import { API_RESERVED_CONCURRENCY, API_THROTTLE_BURST, API_THROTTLE_RATE_PER_SECOND } from './budget';
import { apiKeys } from './data';
import { publishToBus } from './events';
import { afterMigration } from './migrate';
import {
  API_QUERY_TIMEOUT_SECONDS,
  API_TIMEOUT_SECONDS,
  lambdaDefaults,
  seconds,
  sharedEnvironment,
  storeLinks,
} from './runtime';

export const api = new sst.aws.ApiGatewayV2('Api', {
  transform: {
    // Overload is a 429 from API Gateway, not a 500 for a throttled Lambda (infra/budget.ts has the figures).
    stage: (args) => {
      args.defaultRouteSettings = {
        throttlingBurstLimit: API_THROTTLE_BURST,
        throttlingRateLimit: API_THROTTLE_RATE_PER_SECOND,
      };
    },
  },
});

export const apiFunction = new sst.aws.Function('ApiHandler', {
  ...lambdaDefaults,
  handler: 'functions/api.handler',
  timeout: `${API_TIMEOUT_SECONDS} seconds`,
  // Bounds the connections the API can hold (infra/budget.ts); requests beyond it are throttled.
  concurrency: { reserved: API_RESERVED_CONCURRENCY },
  // The keys arrive through the link (encrypted in the bundle), never as an environment variable.
  link: [...storeLinks, apiKeys],
  permissions: [publishToBus],
  environment: {
    ...sharedEnvironment,
    DATABASE_QUERY_TIMEOUT: seconds(API_QUERY_TIMEOUT_SECONDS),
    // The API answers only the host name it is reached by (DNS rebinding defence); add custom domains here.
    ALLOWED_HOSTS: api.url.apply((url) => new URL(url).hostname),
  },
  transform: { function: afterMigration },
});

// Hono owns routing, so every method and path goes to one function (the route uses payload format 2.0).
api.route('$default', apiFunction.arn);
