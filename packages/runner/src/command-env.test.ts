import { describe, expect, it, vi } from 'vitest';
import { commandEnv } from './command-env';
import { runShell } from './shell';

const execution = {
  id: '7',
  jobId: '3',
  attempt: 2,
  delivery: 1,
  scheduledFor: new Date('2026-01-01T00:00:00Z'),
  payload: { a: 1 },
} as Parameters<typeof commandEnv>[0];

describe('commandEnv', () => {
  it("keeps the scheduler's secrets, SST's link key included, from a job's command", () => {
    const env = commandEnv(execution, {
      passthrough: '*',
      base: {
        PATH: '/usr/bin',
        DATABASE_URL: 'postgres://u:p@h/db',
        REDIS_URL: 'rediss://default:t@h:6379',
        API_KEYS: 'k',
        HTTP_SIGNING_SECRET: 'whsec_1,whsec_0',
        AWS_SECRET_ACCESS_KEY: 's',
        AWS_SESSION_TOKEN: 't',
        SST_KEY: 'base64key',
        SST_KEY_FILE: 'resource.enc',
        SST_RESOURCE_App: '{}',
        SST_RESOURCE_Database: '{"password":"p"}',
        SECRETS_KEY: 'k',
      },
    });
    expect(Object.keys(env).sort()).toEqual([
      'JOB_ATTEMPT',
      'JOB_DELIVERY',
      'JOB_EXECUTION_ID',
      'JOB_ID',
      'JOB_PAYLOAD',
      'JOB_SCHEDULED_FOR',
      'PATH',
    ]);
    expect(env.JOB_PAYLOAD).toBe('{"a":1}');
  });

  it("is built by default: the worker's other variables stay out unless passed through", () => {
    const base = {
      PATH: '/usr/bin',
      LANG: 'C.UTF-8',
      LC_TIME: 'de_DE.UTF-8',
      HOME: '/home/w',
      USER: 'w',
      LOGNAME: 'w',
      TRACEPARENT: '00-inherited',
      PGPASSWORD: 'canary-pg',
      AWS_REGION: 'eu-west-1',
      PIP_INDEX_URL: 'https://pypi.example',
      DATABASE_URL: 'postgres://u:p@h/db',
    };
    const clean = commandEnv({ ...execution, timezone: 'Europe/Berlin' }, { base });
    expect(Object.keys(clean).sort()).toEqual([
      'HOME',
      'JOB_ATTEMPT',
      'JOB_DELIVERY',
      'JOB_EXECUTION_ID',
      'JOB_ID',
      'JOB_PAYLOAD',
      'JOB_SCHEDULED_FOR',
      'LANG',
      'LC_TIME',
      'LOGNAME',
      'PATH',
      'TZ',
      'USER',
    ]);
    expect(clean.TZ).toBe('Europe/Berlin');
    const passed = commandEnv(execution, { base, passthrough: ['AWS_REGION', 'PIP_*', 'DATABASE_URL'] });
    expect(passed.AWS_REGION).toBe('eu-west-1');
    expect(passed.PIP_INDEX_URL).toBe('https://pypi.example');
    expect(passed.PGPASSWORD).toBeUndefined();
    expect(passed.DATABASE_URL).toBeUndefined();
    expect(commandEnv(execution, { base: {} }).PATH).toMatch(/\/usr\/bin/);
  });

  it("puts the job's own variables under its identity, which they cannot replace", () => {
    const env = commandEnv(execution, { base: {}, own: { GREETING: 'hi', JOB_ID: 'forged', PATH: '/opt/bin' } });
    expect(env.GREETING).toBe('hi');
    expect(env.PATH).toBe('/opt/bin');
    expect(env.JOB_ID).toBe('3');
  });
});

describe('a command job', () => {
  it('never sees HTTP_SIGNING_SECRET (a command could otherwise forge requests receivers trust)', async () => {
    vi.stubEnv('HTTP_SIGNING_SECRET', 'whsec_live_123');
    try {
      const result = await runShell('env', execution, new AbortController().signal);
      expect(result.ok).toBe(true);
      expect(result.output).toContain('JOB_ID=3');
      expect(result.output).not.toContain('whsec_live_123');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('a command', () => {
  it("runs in its job's time zone, whatever the worker's", async () => {
    vi.stubEnv('TZ', 'UTC');
    try {
      const inTokyo = { ...execution, timezone: 'Asia/Tokyo' };
      const result = await runShell('echo "$TZ"; date +%z', inTokyo, new AbortController().signal);
      expect(result.output).toBe('Asia/Tokyo\n+0900\n');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('keeps stdout and stderr interleaved, each stderr line marked', async () => {
    const result = await runShell(
      'echo out1; sleep 0.05; echo err1 >&2; sleep 0.05; echo out2; printf "err2\\nerr3" >&2; sleep 0.05; echo out3',
      execution,
      new AbortController().signal,
    );
    expect(result.output).toBe('out1\n[stderr] err1\nout2\n[stderr] err2\nout3\n[stderr] err3');
  });
});
