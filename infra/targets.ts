/**
 * What Lambda targets may invoke: the one list (workers get `lambda:InvokeFunction` on these and nothing else).
 * HTTP targets reach the internet from the private subnets through the VPC's NAT (infra/network.ts); their signing
 * secret is in infra/signing.ts. No SST globals here, so the list can be read (and tested) on its own.
 */

/**
 * Full ARNs of the functions Lambda targets may invoke, e.g. `arn:aws:lambda:eu-west-1:123456789012:function:billing-close`.
 * A job naming any other function fails with AccessDeniedException (final: no retries). Each entry also covers the
 * function's versions and aliases (`<arn>:*`).
 */
export const LAMBDA_TARGETS: readonly string[] = [];

const FUNCTION_ARN = /^arn:aws[a-zA-Z-]*:lambda:[a-z]{2}(-gov)?-[a-z]+-\d:\d{12}:function:[a-zA-Z0-9-_]+$/;

/** The IAM statement for `arns` (each with its qualifiers), or none for an empty list (IAM refuses empty resources). */
export function invokePermissions(arns: readonly string[]): { actions: string[]; resources: string[] }[] {
  const bad = arns.filter((arn) => !FUNCTION_ARN.test(arn));
  if (bad.length > 0)
    throw new Error(`infra/targets.ts LAMBDA_TARGETS: not unqualified function ARNs: ${bad.join(', ')}`);
  if (arns.length === 0) return [];
  return [{ actions: ['lambda:InvokeFunction'], resources: arns.flatMap((arn) => [arn, `${arn}:*`]) }];
}
