/**
 * The two pieces of the EventBridge SDK the publisher uses. functions/events.ts imports this module on its first
 * send, so the SDK lands in a chunk of its own (the functions are bundled with code splitting, infra/runtime.ts) that
 * a request or tick publishing nothing never loads; a module of its own keeps the SDK's other commands tree-shaken.
 */
export { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
