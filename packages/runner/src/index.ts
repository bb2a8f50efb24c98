/** @module @jobs/runner — runs one attempt: a supervised shell command, a handler, an HTTP request or a Lambda invoke. */
export { createRunner, BUILTIN_HANDLERS, type Handler, type RunnerOptions } from './runner';
export { type SecretSource } from './secrets';
export { findSupervisor, lookupUser, type Supervision } from './supervisor';
export { guardedLookup, ADDRESS_REFUSED } from './http-guard';
export { verifySignature } from './signing';
export { createChannelSender } from './channels';
