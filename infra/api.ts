/** The REST API: the Hono Lambda behind an HTTP API (API Gateway v2) `$default` route. */
import { apiKeys } from './data';
import { afterMigration } from './migrate';
import { lambdaDefaults, sharedEnvironment, sharedLink } from './runtime';

export const apiFunction = new sst.aws.Function('ApiHandler', {
  ...lambdaDefaults,
  handler: 'functions/api.handler',
  // API Gateway gives up on an HTTP API integration after 30 s anyway.
  timeout: '30 seconds',
  link: [...sharedLink, apiKeys],
  environment: { ...sharedEnvironment, API_KEYS: apiKeys.value },
  transform: { function: afterMigration },
});

export const api = new sst.aws.ApiGatewayV2('Api');

// Hono owns routing, so every method and path goes to one function (the route uses payload format 2.0).
api.route('$default', apiFunction.arn);
