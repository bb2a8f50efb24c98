/** API Gateway HTTP API (v2, payload format 2.0) events, shaped as the `$default` route delivers them. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The API Gateway host these events arrive at (a deployment lists its own in ALLOWED_HOSTS). */
export const APIGW_HOST = 'abc123.execute-api.eu-west-1.amazonaws.com';

export function httpApiEvent(input: {
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string;
}): APIGatewayProxyEventV2 {
  const headers = {
    accept: '*/*',
    host: APIGW_HOST,
    'user-agent': 'curl/8.5.0',
    'x-forwarded-for': '203.0.113.7',
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
    ...(input.body !== undefined ? { 'content-length': String(Buffer.byteLength(input.body)) } : {}),
    ...input.headers,
  };
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: input.path,
    rawQueryString: input.query ?? '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: APIGW_HOST,
      domainPrefix: 'abc123',
      http: {
        method: input.method,
        path: input.path,
        protocol: 'HTTP/1.1',
        sourceIp: '203.0.113.7',
        userAgent: 'curl/8.5.0',
      },
      requestId: 'JKJaXmPLvHcESHA=',
      routeKey: '$default',
      stage: '$default',
      time: '30/Nov/2025:12:00:00 +0000',
      timeEpoch: 1764504000000,
    },
    body: input.body,
    isBase64Encoded: false,
  };
}
