/** Settings that would silently do something else stop the process at start, naming the variable. */
import { describe, expect, it } from 'vitest';
import { REDIS_URL, createTestEnv } from './support/env';
import { spawnEntry } from './support/processes';

describe('start-up checks of a real process', () => {
  it('stops on a Redis database the server does not have (instead of using database 0)', async () => {
    const env = await createTestEnv('start');
    try {
      const child = spawnEntry('functions/worker-process.ts', { ...env.childEnv, REDIS_URL: `${REDIS_URL}/99` });
      expect((await child.exited).code).toBe(1);
      expect(child.output()).toMatch(/REDIS_URL names database 99, which the Redis server at .* does not have/);
    } finally {
      await env.cleanup();
    }
  });

  it('stops on an API key with whitespace, without printing the key', async () => {
    const child = spawnEntry('functions/local.ts', { API_KEYS: 'good-key-0123456789,bad secret-key', HTTP_PORT: '0' });
    expect((await child.exited).code).toBe(1);
    expect(child.output()).toMatch(/API_KEYS: key 2 holds whitespace/);
    expect(child.output()).not.toContain('secret-key');
  });
});
