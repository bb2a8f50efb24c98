/** @module process — shared lifecycle of the long-running processes: fatal start errors and signal handling. */
import { CommandSetupError } from './command-setup';
import { ConfigError } from './config';
import { UnreachableError } from './resources';

/** Prints a start failure without a stack for the errors users can fix themselves, then exits 1. */
export function exitOnStartError(error: unknown): never {
  if (error instanceof ConfigError || error instanceof UnreachableError || error instanceof CommandSetupError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
  process.exit(1);
}

/** Runs `shutdown` once on SIGTERM or SIGINT; a second signal exits at once. */
export function onShutdownSignal(shutdown: (signal: NodeJS.Signals) => Promise<void>): void {
  let shuttingDown = false;
  const handle = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      process.stderr.write(`${signal} again: exiting now\n`);
      process.exit(130);
    }
    shuttingDown = true;
    shutdown(signal).then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}
