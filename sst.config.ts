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
    await import('./infra/network');
    await import('./infra/data');
    const { bus } = await import('./infra/events');
    await import('./infra/migrate');
    const { api } = await import('./infra/api');
    await import('./infra/signing');
    await import('./infra/workers');
    await import('./infra/scheduler');

    return {
      api: api.url,
      eventBus: bus.name,
    };
  },
});
