/** The EventBridge bus for execution state-transition events and the tick's "work-available" wake-ups. */

export const bus = new sst.aws.Bus('Events');

/** The wake-up the tick publishes when it queued work; the runtime must send exactly these values. */
export const workAvailable = {
  source: 'jobs.scheduler',
  detailType: 'work-available',
} as const;

/**
 * What a publisher needs: PutEvents on this bus and nothing else. Linking the bus would grant `events:*` on it
 * (DeleteEventBus, PutRule, ...), so runtimes get this permission and the bus name instead.
 */
export const publishToBus = { actions: ['events:PutEvents'], resources: [bus.arn] };
