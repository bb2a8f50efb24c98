import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../functions/config';

const problemsOf = (env: NodeJS.ProcessEnv): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('configuration from the environment', () => {
  it('has working defaults for a local run', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: '{jobs}',
      workerLanes: ['short', 'long'],
      eventBusName: null,
      eventTransitions: null,
      apiKeys: [],
    });
  });

  it('reads lists with spaces and repeats', () => {
    const config = loadConfig({ EVENT_TRANSITIONS: ' dead, failed ,dead', WORKER_LANES: 'long', API_KEYS: 'a, b' });
    expect(config.eventTransitions).toEqual(['dead', 'failed']);
    expect(config.workerLanes).toEqual(['long']);
    expect(config.apiKeys).toEqual(['a', 'b']);
    expect(loadConfig({ EVENT_TRANSITIONS: 'all' }).eventTransitions).toBeNull();
  });

  it('reports every bad variable at once, each with what it accepts', () => {
    const problems = problemsOf({
      EVENT_TRANSITIONS: 'dead,exploded',
      WORKER_LANES: 'fast',
      QUEUE_PREFIX: 'jobs',
      LEASE_TIMEOUT: 'soon',
      WORKER_CONCURRENCY: '0',
      DATABASE_URL: 'mysql://x',
    });
    expect(problems).toHaveLength(6);
    expect(problems.find((p) => p.startsWith('EVENT_TRANSITIONS'))).toMatch(/"all" or list statuses from queued, .*skipped \(got "dead,exploded"\)/);
    expect(problems.find((p) => p.startsWith('WORKER_LANES'))).toMatch(/short, long/);
    expect(problems.find((p) => p.startsWith('QUEUE_PREFIX'))).toMatch(/hash tag/);
  });

  it('never echoes a secret it could not parse', () => {
    const problems = problemsOf({ DATABASE_URL: 'postgres://user:hunter2@[bad' });
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('documents every variable it reads in the README configuration table', () => {
    const source = readFileSync(new URL('../functions/config.ts', import.meta.url), 'utf8');
    const read = [...source.matchAll(/\b(?:text|duration|integer|url|oneOf)\('([A-Z_]+)'/g)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(15);
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = new Set([...readme.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!));
    expect(read.filter((name) => !table.has(name))).toEqual([]);
  });
});
