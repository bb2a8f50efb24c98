/** The REST API: the Hono Lambda behind an HTTP API (API Gateway v2) `$default` route. */
import { apiKeys } from './data';
import { afterMigration } from './migrate';
import { lambdaDefaults, sharedEnvironment, sharedLink } from './runtime';

export const api = new sst.aws.ApiGatewayV2('Api');

export const apiFunction = new sst.aws.Function('ApiHandler', {
  ...lambdaDefaults,
  handler: 'functions/api.handler',
  // API Gateway gives up on an HTTP API integration after 30 s anyway.
  timeout: '30 seconds',
  link: [...sharedLink, apiKeys],
  environment: {
    ...sharedEnvironment,
    API_KEYS: apiKeys.value,
    // The API answers only the host names it is reached by (DNS rebinding defence); add custom domains here.
    ALLOWED_HOSTS: api.url.apply((url) => new URL(url).hostname),
  },
  transform: { function: afterMigration },
});

// Hono owns routing, so every method and path goes to one function (the route uses payload format 2.0).
api.route('$default', apiFunction.arn);
