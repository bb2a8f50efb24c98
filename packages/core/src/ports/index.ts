/**
 * @module ports — the narrow interfaces the core needs from the outside world.
 * Adapters (packages/store, packages/queue, packages/runner) implement them; entry points in functions/ wire them.
 * A leaf: these files import only domain types (types, targets, access, cancellation), never the passes that use
 * them, so no import comes back around.
 */
export * from './basics';
export * from './tick';
export * from './worker';
export * from './recovery';
export * from './flow';
export * from './commands';
export * from './queue';
export * from './tracing';
