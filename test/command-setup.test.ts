import { describe, expect, it } from 'vitest';
import { createRunner } from '@jobs/runner';
import type { Cancellation, StartedExecution } from '@jobs/core';
import { commandSetup, CommandSetupError } from '../functions/command-setup';
import { createLogger } from '../functions/logger';
import { supervision } from './support/engine';

const logger = createLogger({ level: 'silent' });
const on = { commandJobs: true, jobUser: null };

describe('how a worker runs command jobs', () => {
  it('runs them as nobody under the supervisor when the worker is root', () => {
    expect(commandSetup(on, logger, { supervisor: supervision!.path, uid: 0 })).toEqual({
      enabled: true,
      supervision: { path: supervision!.path, user: 'nobody' },
    });
  });

  it('refuses to start as root without the supervisor, or with a job user that does not exist', () => {
    expect(() => commandSetup(on, logger, { supervisor: null, uid: 0 })).toThrow(
      /npm run build:supervisor.*COMMAND_JOBS=off/,
    );
    expect(() =>
      commandSetup({ ...on, jobUser: 'no-such-user-x' }, logger, { supervisor: supervision!.path, uid: 0 }),
    ).toThrow(CommandSetupError);
  });

  it('runs them as itself when it is not root, and refuses a JOB_USER it cannot switch to', () => {
    expect(commandSetup(on, logger, { supervisor: supervision!.path, uid: 1000 }).supervision).toEqual({
      path: supervision!.path,
      user: null,
    });
    expect(() =>
      commandSetup({ ...on, jobUser: 'nobody' }, logger, { supervisor: supervision!.path, uid: 1000 }),
    ).toThrow(/only a worker running as root/);
    expect(commandSetup(on, logger, { supervisor: null, uid: 1000 })).toEqual({ enabled: true, supervision: null });
  });

  it('COMMAND_JOBS=off: the worker fails a command job without running it', async () => {
    expect(commandSetup({ ...on, commandJobs: false }, logger)).toEqual({ enabled: false, supervision: null });
    const runner = createRunner({ commands: false, supervision });
    const execution = {
      id: '1',
      jobId: '1',
      attempt: 1,
      command: 'touch /tmp/never',
      handler: null,
      payload: null,
      scheduledFor: new Date(),
    } as unknown as StartedExecution;
    const result = await runner.run(execution, { signal: new AbortController().signal } as Cancellation);
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/COMMAND_JOBS=off/) });
  });
});
