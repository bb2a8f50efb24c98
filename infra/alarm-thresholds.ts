/** The alarms' thresholds (infra/alarms.ts), with no SST globals so that tests and docs read them on their own. */

/**
 * RDS free storage (bytes) below which the database alarms. Storage autoscaling adds space once less than 10% is
 * free (2 GB at the start size) at most every six hours, and never past the stage's databaseMaxStorageGb: less than
 * this left means it reached that ceiling or cannot keep up.
 */
export const FREE_STORAGE_ALARM_BYTES = 1024 ** 3;
/**
 * CPU credits below which a burstable (t-class) database or cache alarms: about a tenth of what a t4g.micro can bank
 * (288). Burstable RDS and ElastiCache run unlimited: past zero they do not slow down but bill surplus credits.
 */
export const CPU_CREDIT_ALARM_BALANCE = 30;
/**
 * Redis memory in use (percent of maxmemory) at which it alarms. The node refuses writes when full (noeviction), and
 * every claim is a write; live output is bounded far below this (docs/deploy-aws.md, Redis memory).
 */
export const REDIS_MEMORY_ALARM_PERCENT = 75;
/** API responses with a 5xx status in five minutes at which the API alarms. */
export const API_5XX_ALARM_COUNT = 5;

/** Whether an RDS or ElastiCache class is burstable (earns and spends CPU credits). */
export const isBurstable = (instanceClass: string) => /^(cache\.|db\.)?t\d/.test(instanceClass);
