/**
 * @module command-setup — decides how this worker runs command jobs: not at all (COMMAND_JOBS=off), under the
 * supervisor as JOB_USER (a root worker), or under the supervisor as the worker's own user. A root worker never runs
 * a command as root unless JOB_USER says so, and never unsupervised: it refuses to start instead.
 */
import { findSupervisor, lookupUser, type Supervision } from '@jobs/runner';
import { userInfo } from 'node:os';
import type { Config } from './config';
import type { AppLogger } from './logger';

export interface CommandSetup {
  enabled: boolean;
  supervision: Supervision | null;
}

export class CommandSetupError extends Error {
  override readonly name = 'CommandSetupError';
}

/** The default job user of a root worker. */
const DEFAULT_JOB_USER = 'nobody';

export function commandSetup(
  config: Pick<Config, 'commandJobs' | 'jobUser'> & Partial<Pick<Config, 'jobEnvPassthrough'>>,
  logger: AppLogger,
  options: { supervisor?: string | null; uid?: number } = {},
): CommandSetup {
  if (!config.commandJobs) return { enabled: false, supervision: null };
  if (config.jobEnvPassthrough === '*') {
    logger.warn(
      { event: 'worker.commands_inherit_env' },
      "JOB_ENV_PASSTHROUGH=*: commands get this worker's whole environment (all but the scheduler's own secrets), any credential on the host included",
    );
  }
  const supervisor = options.supervisor === undefined ? findSupervisor() : options.supervisor;
  const uid = options.uid ?? process.getuid?.() ?? -1;
  if (uid === 0) {
    if (!supervisor) {
      throw new CommandSetupError(
        'the worker runs as root, so commands must run as JOB_USER under the supervisor, but packages/runner/bin/jobs-supervise ' +
          'is not built: run `npm run build:supervisor` (needs a C compiler: apt-get install gcc libc6-dev), or set COMMAND_JOBS=off',
      );
    }
    const user = config.jobUser ?? DEFAULT_JOB_USER;
    const ids = lookupUser(supervisor, user);
    if (!ids)
      throw new CommandSetupError(
        `JOB_USER=${user}: there is no such user on this host (commands of a root worker run as JOB_USER)`,
      );
    if (ids.uid === 0) {
      logger.warn(
        { event: 'worker.commands_as_root', job_user: user },
        `JOB_USER=${user} is root: commands can read every secret of this worker and kill it`,
      );
    }
    return { enabled: true, supervision: { path: supervisor, user } };
  }
  if (config.jobUser !== null && config.jobUser !== safeUsername()) {
    throw new CommandSetupError(
      `JOB_USER=${config.jobUser}: only a worker running as root can run commands as another user`,
    );
  }
  if (!supervisor) {
    logger.warn(
      { event: 'worker.commands_unsupervised' },
      "jobs-supervise is not built: a command's processes that leave its process group, and all of them when the worker is killed, outlive the attempt (npm run build:supervisor)",
    );
    return { enabled: true, supervision: null };
  }
  return { enabled: true, supervision: { path: supervisor, user: null } };
}

function safeUsername(): string | null {
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}
