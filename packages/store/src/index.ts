/**
 * @module @jobs/store — PostgreSQL adapter: migrations and one module of SQL per table.
 * @example
 *   const store = createStore(new pg.Pool({ connectionString }));
 *   await migrate(store.pool);
 */
import type { CommandStore, RecoveryStore, RetentionStore, TickStore, WorkerStore } from '@jobs/core';
import type pg from 'pg';
import * as audit from './audit';
import * as channels from './channels';
import * as commands from './execution-commands';
import * as executions from './executions';
import * as flow from './flow';
import * as reads from './executions-read';
import * as minutes from './minutes';
import * as retention from './retention';
import { statsReader } from './stats';
import * as sessions from './sessions';
import * as jobs from './jobs';
import * as edits from './job-edits';
import * as metrics from './metrics';
import { jobHealthRead } from './job-health';
import * as workers from './workers';
import { jobDefinitions } from './job-definitions';
import { createTriggerBatcher } from './trigger-batch';
import { bindPool, type Bound } from './bind';
import type { ExecutionStats } from './stats';
import type { MetricsSnapshot } from './metrics';

export { migrate, migrations } from './migrate';
export { grantAppRole, scramVerifier } from './app-role';
export { currentRelease, latestMigration, recordRelease, schemaVersion } from './releases';
export { StorePool, idempotent, type StorePoolEvent } from './pool';
export { ORDERED_PLANS_SQL, OUTCOMES_PER_MINUTE_SQL, executionListQuery } from './executions-read';
export { EXECUTION_STATS_SQL, executionStatsSql } from './stats';
export type { LaneLoad, MinuteOutcomes } from './executions-read';
export type { ExecutionStats } from './stats';
export type { AuditRow } from './audit';
export type { FinishedTotals, FoldResult, MetricsSnapshot } from './metrics';
export { METRICS_SQL } from './metrics';
export type { JobHealthRead } from './job-health';
export { DURATION_BOUNDS_MS, LATENESS_BOUNDS_MS } from './minutes';

/**
 * What the API and the dashboard read, as bound queries: the store's read port. The API depends on this (and on the
 * core's command port), not on the whole store.
 */
const readQueries = {
  jobGet: jobs.jobGet,
  jobGetByName: jobs.jobGetByName,
  jobNames: jobs.jobNames,
  jobList: jobs.jobList,
  jobChoices: jobs.jobChoices,
  jobVersions: edits.jobVersions,
  executionGet: reads.executionGet,
  executionList: reads.executionList,
  executionListIso: reads.executionListIso,
  executionsLoadByLane: reads.executionsLoadByLane,
  executionOutcomesPerMinute: reads.executionOutcomesPerMinute,
  executionLastOutcomes: reads.executionLastOutcomes,
  executionChain: reads.executionChain,
  laneList: flow.laneList,
  auditList: audit.auditList,
  workerListActive: workers.workerListActive,
  jobHealth: jobHealthRead,
};

/** The store's read port (see readQueries), with the reads that keep state between calls and the health probe. */
type StoreReads = Bound<typeof readQueries> & {
  executionStats: () => Promise<ExecutionStats>;
  metricsSnapshot: () => Promise<MetricsSnapshot>;
  /** True when the database answers. */
  ping: () => Promise<boolean>;
};

/** Sign-in, sessions and the audit trail: what the dashboard and the API write besides commands. */
const accessQueries = {
  auditInsert: audit.auditInsert,
  sessionInsert: sessions.sessionInsert,
  sessionGet: sessions.sessionGet,
  sessionEnd: sessions.sessionEnd,
  sessionListLive: sessions.sessionListLive,
  signInFailures: sessions.signInFailures,
  signInFailed: sessions.signInFailed,
};
type AccessStore = Bound<typeof accessQueries>;

/** Alert channels (docs/alerts.md): their config holds secrets, shown only through channelView. */
const channelQueries = {
  channelInsert: channels.channelInsert,
  channelGet: channels.channelGet,
  channelsGet: channels.channelsGet,
  channelList: channels.channelList,
  channelUpdate: channels.channelUpdate,
  channelDelete: channels.channelDelete,
};
type ChannelStore = Bound<typeof channelQueries>;

/** What the API (and the dashboard mounted on it) needs of the store. */
export type ApiStore = StoreReads & AccessStore & CommandStore & ChannelStore;

export type Store = ReturnType<typeof createStore>;

/** Binds every query module to one pool; the result implements all the core's store ports and the API's. */
export function createStore(
  pool: pg.Pool,
  options: {
    jobDefinitionTtlMs?: number;
    /** Read the stored trace parent with each attempt a worker claims (default true); false where tracing is off. */
    traceparent?: boolean;
    /**
     * HISTORY_RETENTION, which prunes the roll-up (default 30 days; null: forever). Under 24 hours the stats read
     * their whole window every time instead of holding its settled minutes (stats.ts), since retention deletes them.
     */
    historyRetentionMs?: number | null;
  } = {},
) {
  const read = { traceparent: options.traceparent ?? true };
  const definitions = jobDefinitions({ ttlMs: options.jobDefinitionTtlMs ?? 30_000 });
  // Concurrent manual triggers share a statement and a commit (packages/store/src/trigger-batch.ts).
  const triggers = createTriggerBatcher(pool);
  const retentionMs = options.historyRetentionMs === undefined ? 30 * 86_400_000 : options.historyRetentionMs;
  const reads: StoreReads = {
    ...bindPool(pool, readQueries),
    executionStats: statsReader(pool, { holdMinutes: retentionMs === null || retentionMs >= 86_400_000 }),
    metricsSnapshot: metrics.metricsReader(pool),
    ping: async () => {
      await pool.query('SELECT 1');
      return true;
    },
  };
  const store = {
    pool,
    ...reads,
    ...bindPool(pool, accessQueries),
    ...bindPool(pool, channelQueries),
    ...bindPool(pool, {
      // jobs and their edits
      jobInsert: jobs.jobInsert,
      jobSetStatus: jobs.jobSetStatus,
      jobDelete: jobs.jobDelete,
      jobsMaterialiseDue: jobs.jobsMaterialiseDue,
      jobInsertIfAbsent: jobs.jobInsertIfAbsent,
      jobUpdate: edits.jobUpdate,
      executionsBackfill: edits.executionsBackfill,
      executionsAtFireTimes: edits.executionsAtFireTimes,
      // executions: worker hot path and recovery
      executionsRecord: executions.executionsRecord,
      executionsFinish: executions.executionsFinish,
      executionsHeartbeat: executions.executionsHeartbeat,
      executionsKeepOutput: executions.executionsKeepOutput,
      executionsRelease: executions.executionsRelease,
      executionsLeaseExpired: executions.executionsLeaseExpired,
      executionsWaitingPage: executions.executionsWaitingPage,
      executionsWaiting: executions.executionsWaiting,
      executionsDeliveryLost: executions.executionsDeliveryLost,
      // executions: commands
      executionsEnqueueMany: commands.executionsEnqueueMany,
      executionCancel: commands.executionCancel,
      executionReplay: commands.executionReplay,
      // retention
      executionsPrune: retention.executionsPrune,
      jobsWithShortRetention: retention.jobsWithShortRetention,
      executionMinutesPrune: minutes.executionMinutesPrune,
      // flow control
      flowSnapshot: flow.flowSnapshot,
      executionsFinal: flow.executionsFinal,
      laneSetPaused: flow.laneSetPaused,
      executionsRetag: flow.executionsRetag,
      // access: pruning
      auditPrune: audit.auditPrune,
      sessionsPrune: sessions.sessionsPrune,
      // metrics: the fold that keeps the Prometheus counters monotonic
      totalsFold: metrics.totalsFold,
      totalsFoldedThrough: metrics.totalsFoldedThrough,
      // workers
      workerUpsert: workers.workerUpsert,
      workerRemove: workers.workerRemove,
      workersPrune: workers.workersPrune,
    }),
    // The few that carry more than the pool: the definition cache, the trace setting, the trigger batcher.
    executionsLoad: (claims: Parameters<typeof executions.executionsLoad>[2]) =>
      executions.executionsLoad(pool, definitions, claims, read),
    executionsStart: (input: Parameters<typeof executions.executionsStart>[1]) =>
      executions.executionsStart(pool, input, read),
    executionTrigger: (input: Parameters<typeof commands.executionTrigger>[1]) => triggers.trigger(input),
  };
  return store satisfies TickStore & WorkerStore & RecoveryStore & CommandStore & RetentionStore & ApiStore;
}
export { transaction } from './transaction';
export { parseMasterKey, secretPut, secretValues, secretsRotate, type Keyring } from './secrets';
