/** The secret that signs HTTP target requests (Jobs-Signature), for the worker Lambda and the container worker. */

/**
 * HTTP_SIGNING_SECRET: `npx sst secret set HttpSigningSecret 'new,old'`. The placeholder is one space (SSM refuses an
 * empty parameter), which the runtime trims to "unset": requests go unsigned until a secret is set.
 */
export const httpSigningSecret = new sst.Secret('HttpSigningSecret', ' ');

/** The container worker's copy, as an SSM SecureString ECS injects at start (a Service's links would be plain env). */
export const containerTargetSecrets = $dev
  ? undefined
  : {
      HTTP_SIGNING_SECRET: new aws.ssm.Parameter('ContainerHttpSigningSecret', {
        name: `/${$app.name}/${$app.stage}/container/http-signing-secret`,
        type: 'SecureString',
        value: httpSigningSecret.value,
      }).arn,
    };
