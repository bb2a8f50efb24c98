/// <reference path="./.sst/platform/config.d.ts" />
/** SST app: stage policy in app(); run() only imports infra/ in dependency order and returns the outputs. */

export default $config({
  app(input) {
    return {
      name: 'jobs-scheduler',
      home: 'aws',
      removal: input.stage === 'production' ? 'retain' : 'remove',
      protect: ['production'].includes(input.stage),
    };
  },
  async run() {
    // Before any resource: a deploy the account or the stage's queue cannot take fails here, having changed nothing.
    const { preflight } = await import('./infra/preflight');
    const { stageSettings } = await import('./infra/settings');
    await preflight({ app: $app.name, stage: $app.stage, settings: stageSettings($app.stage) });

    await import('./infra/network');
    await import('./infra/data');
    const { bus } = await import('./infra/events');
    await import('./infra/migrate');
    const { api } = await import('./infra/api');
    await import('./infra/signing');
    await import('./infra/jobs');
    await import('./infra/workers');
    await import('./infra/scheduler');
    const { alarms } = await import('./infra/alarms');

    return {
      api: api.url,
      eventBus: bus.name,
      // Subscribe to it: aws sns subscribe --topic-arn <alerts> --protocol email --notification-endpoint ops@example.com
      ...(alarms ? { alerts: alarms.alerts.arn } : {}),
    };
  },
});
