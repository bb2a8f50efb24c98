/** @module process — shared lifecycle of the long-running processes: fatal start errors and signal handling. */
import { CommandSetupError } from './command-setup';
import { ConfigError } from './config';
import { UnreachableError } from './resources';
import { SchemaBehindError } from './context';

/** Prints a start failure without a stack for the errors users can fix themselves, then exits 1. */
export function exitOnStartError(error: unknown): never {
  if (
    error instanceof ConfigError ||
    error instanceof UnreachableError ||
    error instanceof CommandSetupError ||
    error instanceof SchemaBehindError
  ) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
  process.exit(1);
}

/**
 * A repeat of the first signal this soon is the same request: under `npm start` a Ctrl-C reaches node from the
 * terminal and again forwarded by npm.
 */
const SAME_REQUEST_MS = 1000;
/** How often a process started by npm checks that npm is still its parent. */
const PARENT_CHECK_MS = 500;

export type ShutdownReason = NodeJS.Signals | 'parent-exited';

/**
 * Runs `shutdown` once on SIGTERM or SIGINT; another signal (after a second) exits at once. With `exitWithParent`
 * (the process was started by `npm start`, `npm run worker` or `npm run scheduler`, whose scripts exec node), the
 * death of the parent (npm killed by any signal) shuts down the same way, instead of leaving node serving alone.
 */
export function onShutdownSignal(
  shutdown: (reason: ShutdownReason) => Promise<void>,
  options: { exitWithParent?: boolean } = {},
): void {
  let first: { reason: ShutdownReason; at: number } | null = null;
  const handle = (reason: ShutdownReason) => {
    if (first) {
      if (reason === 'parent-exited' || (reason === first.reason && Date.now() - first.at < SAME_REQUEST_MS)) return;
      process.stderr.write(`${reason} again: exiting now\n`);
      process.exit(130);
    }
    first = { reason, at: Date.now() };
    if (reason === 'parent-exited') process.stderr.write('the parent process (npm) exited: shutting down\n');
    shutdown(reason).then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
  if (options.exitWithParent) {
    const parent = process.ppid;
    const timer = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(timer);
      handle('parent-exited');
    }, PARENT_CHECK_MS);
    timer.unref();
  }
}
