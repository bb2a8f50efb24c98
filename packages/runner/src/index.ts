/** @module @jobs/runner — runs one attempt: a shell command (process group, timeout, capped output) or a handler. */
export { createRunner, BUILTIN_HANDLERS, type Handler, type HandlerContext, type RunnerOptions } from './runner';
export { runShell, commandEnv, type ShellOptions } from './shell';
export { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';
