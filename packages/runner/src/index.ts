/** @module @jobs/runner — runs one attempt: a supervised shell command (timeout, capped output) or a handler. */
export { createRunner, BUILTIN_HANDLERS, COMMANDS_DISABLED, type Handler, type HandlerContext, type RunnerOptions } from './runner';
export { runShell, commandEnv, type ShellOptions } from './shell';
export { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';
export { findSupervisor, lookupUser, type Supervision } from './supervisor';
export { startTargetSpan, traceAttempts, attemptAttributes, type TargetSpan } from './traced';
