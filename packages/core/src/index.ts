/** @module @jobs/core — domain types, state machine, scheduling math and the passes, against ports. No I/O. */
export * from './types';
export * from './ports';
export * from './errors';
export * from './clip';
export * from './lifecycle';
export * from './retry';
export * from './duration';
export * from './cron';
export * from './schedule';
export * from './transitions';
export * from './tick';
export * from './worker';
export * from './cancellation';
export * from './recovery';
export * from './retention';
export * from './commands';
export * from './flow';
