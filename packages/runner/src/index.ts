/** @module @jobs/runner — runs one attempt: a supervised shell command, a handler, an HTTP request or a Lambda invoke. */
export {
  createRunner,
  BUILTIN_HANDLERS,
  COMMANDS_DISABLED,
  type Handler,
  type HandlerContext,
  type RunnerOptions,
} from './runner';
export { runShell, type ShellOptions } from './shell';
export { commandEnv, DEFAULT_PATH, type CommandEnvOptions } from './command-env';
export { attemptSecretNames, maskValues, type SecretSource } from './secrets';
export { CappedOutput, DEFAULT_OUTPUT_LIMIT } from './output';
export { findSupervisor, lookupUser, type Supervision } from './supervisor';
export { createHttpTarget, requestBody, retryAfterMs, type HttpOptions } from './http';
export { guardedAgent, guardedLookup, ADDRESS_REFUSED } from './http-guard';
export { createLambdaTarget, lambdaClient, type LambdaOptions } from './lambda';
export { sign, signatureHeader, verifySignature } from './signing';
export { startTargetSpan, traceAttempts, attemptAttributes, type TargetSpan } from './traced';
export { createChannelSender, slackBody, type ChannelSenderOptions } from './channels';
