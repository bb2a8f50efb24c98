/**
 * @module @jobs/store — PostgreSQL adapter: migrations and one module of SQL per table.
 * @example
 *   const store = createStore(new pg.Pool({ connectionString }));
 *   await migrate(store.pool);
 */
import type { AuditEntry, CommandStore, RecoveryStore, RetentionStore, TickStore, WorkerStore } from '@jobs/core';
import type pg from 'pg';
import * as audit from './audit';
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

export { migrate, migrations, type MigrateOptions } from './migrate';
export { appRoleProblems, grantAppRole, scramVerifier, type AppRole } from './app-role';
export { EXPAND_CONTRACT_FROM, expandContractProblems } from './expand-contract';
export { currentRelease, latestMigration, recordRelease, schemaVersion } from './releases';
export { StorePool, idempotent, isConnectionError, retrySafe, type StorePoolConfig, type StorePoolEvent } from './pool';
export { isId } from './jobs';
export { ORDERED_PLANS_SQL, OUTCOMES_PER_MINUTE_SQL, executionListQuery } from './executions-read';
export { EXECUTION_STATS_SQL, executionStatsSql } from './stats';
export type { JobListFilter } from './jobs';
export type { ExecutionListFilter, LaneLoad, MinuteOutcomes } from './executions-read';
export type { ExecutionStats } from './stats';
export type { LaneRow } from './flow';
export type { AuditListFilter, AuditRow } from './audit';
export type { SessionRow } from './sessions';
export type { FinishedTotals, FoldResult, LiveCounts, MetricsSnapshot } from './metrics';
export { METRICS_SQL } from './metrics';
export type { JobHealth, JobHealthRead } from './job-health';
export { DURATION_BOUNDS_MS, LATENESS_BOUNDS_MS } from './minutes';

export type Store = ReturnType<typeof createStore>;

/** Binds every query module to one pool; the result implements all the core's store ports. */
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
  const store = {
    pool,
    // jobs
    jobInsert: (spec: Parameters<typeof jobs.jobInsert>[1], audit?: AuditEntry) => jobs.jobInsert(pool, spec, audit),
    jobGet: (id: string) => jobs.jobGet(pool, id),
    jobNames: (ids: readonly string[], options?: { live?: boolean }) => jobs.jobNames(pool, ids, options),
    jobList: (filter: jobs.JobListFilter) => jobs.jobList(pool, filter),
    jobChoices: (limit: number) => jobs.jobChoices(pool, limit),
    jobSetStatus: (input: Parameters<typeof jobs.jobSetStatus>[1], audit?: AuditEntry) =>
      jobs.jobSetStatus(pool, input, audit),
    jobDelete: (id: string, audit?: AuditEntry) => jobs.jobDelete(pool, id, audit),
    jobsMaterialiseDue: (input: Parameters<typeof jobs.jobsMaterialiseDue>[1]) => jobs.jobsMaterialiseDue(pool, input),
    // jobs that change
    jobGetByName: (name: string) => jobs.jobGetByName(pool, name),
    jobInsertIfAbsent: (spec: Parameters<typeof jobs.jobInsertIfAbsent>[1], audit?: AuditEntry) =>
      jobs.jobInsertIfAbsent(pool, spec, audit),
    jobUpdate: (input: Parameters<typeof edits.jobUpdate>[1]) => edits.jobUpdate(pool, input),
    jobVersions: (jobId: string) => edits.jobVersions(pool, jobId),
    executionsBackfill: (input: Parameters<typeof edits.executionsBackfill>[1]) =>
      edits.executionsBackfill(pool, input),
    executionsAtFireTimes: (input: Parameters<typeof edits.executionsAtFireTimes>[1]) =>
      edits.executionsAtFireTimes(pool, input),
    // executions: worker hot path and recovery
    executionsLoad: (claims: Parameters<typeof executions.executionsLoad>[2]) =>
      executions.executionsLoad(pool, definitions, claims, read),
    executionsStart: (input: Parameters<typeof executions.executionsStart>[1]) =>
      executions.executionsStart(pool, input, read),
    executionsRecord: (input: Parameters<typeof executions.executionsRecord>[1]) =>
      executions.executionsRecord(pool, input),
    executionsFinish: (outcomes: Parameters<typeof executions.executionsFinish>[1]) =>
      executions.executionsFinish(pool, outcomes),
    executionsHeartbeat: (input: Parameters<typeof executions.executionsHeartbeat>[1]) =>
      executions.executionsHeartbeat(pool, input),
    executionsKeepOutput: (items: Parameters<typeof executions.executionsKeepOutput>[1]) =>
      executions.executionsKeepOutput(pool, items),
    executionsRelease: (claims: Parameters<typeof executions.executionsRelease>[1]) =>
      executions.executionsRelease(pool, claims),
    executionsLeaseExpired: (limit: number) => executions.executionsLeaseExpired(pool, limit),
    executionsWaitingPage: (input: Parameters<typeof executions.executionsWaitingPage>[1]) =>
      executions.executionsWaitingPage(pool, input),
    executionsWaiting: (ids: readonly string[]) => executions.executionsWaiting(pool, ids),
    executionsDeliveryLost: (ids: readonly string[]) => executions.executionsDeliveryLost(pool, ids),
    // executions: commands and reads
    executionTrigger: (input: Parameters<typeof commands.executionTrigger>[1]) => triggers.trigger(input),
    executionsEnqueueMany: (input: Parameters<typeof commands.executionsEnqueueMany>[1]) =>
      commands.executionsEnqueueMany(pool, input),
    executionCancel: (id: string, audit?: AuditEntry) => commands.executionCancel(pool, id, audit),
    executionReplay: (id: string, options?: { force?: boolean; audit?: AuditEntry }) =>
      commands.executionReplay(pool, id, options),
    executionGet: (id: string) => reads.executionGet(pool, id),
    executionList: (filter: reads.ExecutionListFilter) => reads.executionList(pool, filter),
    executionListIso: (filter: Omit<reads.ExecutionListFilter, 'jobNames'>) => reads.executionListIso(pool, filter),
    executionStats: statsReader(pool, { holdMinutes: retentionMs === null || retentionMs >= 86_400_000 }),
    executionsLoadByLane: () => reads.executionsLoadByLane(pool),
    executionOutcomesPerMinute: (minutes?: number) => reads.executionOutcomesPerMinute(pool, minutes),
    executionLastOutcomes: (jobIds: readonly string[]) => reads.executionLastOutcomes(pool, jobIds),
    executionChain: (id: string) => reads.executionChain(pool, id),
    // retention
    executionsPrune: (input: Parameters<typeof retention.executionsPrune>[1]) => retention.executionsPrune(pool, input),
    jobsWithShortRetention: (input: Parameters<typeof retention.jobsWithShortRetention>[1]) =>
      retention.jobsWithShortRetention(pool, input),
    executionMinutesPrune: (input: Parameters<typeof minutes.executionMinutesPrune>[1]) =>
      minutes.executionMinutesPrune(pool, input),
    // flow control
    flowSnapshot: (input: Parameters<typeof flow.flowSnapshot>[1]) => flow.flowSnapshot(pool, input),
    executionsFinal: (ids: readonly string[]) => flow.executionsFinal(pool, ids),
    laneList: () => flow.laneList(pool),
    laneSetPaused: (input: Parameters<typeof flow.laneSetPaused>[1], audit?: AuditEntry) =>
      flow.laneSetPaused(pool, input, audit),
    executionsRetag: (jobId: string) => flow.executionsRetag(pool, jobId),
    // access: audit trail, dashboard sessions, sign-in failures
    auditInsert: (entry: AuditEntry) => audit.auditInsert(pool, entry),
    auditList: (filter: audit.AuditListFilter) => audit.auditList(pool, filter),
    auditPrune: (input: Parameters<typeof audit.auditPrune>[1]) => audit.auditPrune(pool, input),
    sessionInsert: (input: Parameters<typeof sessions.sessionInsert>[1], entry: AuditEntry) =>
      sessions.sessionInsert(pool, input, entry),
    sessionGet: (tokenHash: Buffer, now: Date) => sessions.sessionGet(pool, tokenHash, now),
    sessionEnd: (tokenHash: Buffer, entry?: AuditEntry) => sessions.sessionEnd(pool, tokenHash, entry),
    sessionListLive: (input: Parameters<typeof sessions.sessionListLive>[1]) => sessions.sessionListLive(pool, input),
    sessionsPrune: (input: Parameters<typeof sessions.sessionsPrune>[1]) => sessions.sessionsPrune(pool, input),
    signInFailures: (input: Parameters<typeof sessions.signInFailures>[1]) => sessions.signInFailures(pool, input),
    signInFailed: (input: Parameters<typeof sessions.signInFailed>[1], entry: AuditEntry) =>
      sessions.signInFailed(pool, input, entry),
    // metrics (the Prometheus scrape) and the fold that keeps its counters monotonic
    metricsSnapshot: metrics.metricsReader(pool),
    jobHealth: (input: Parameters<typeof jobHealthRead>[1]) => jobHealthRead(pool, input),
    totalsFold: () => metrics.totalsFold(pool),
    totalsFoldedThrough: () => metrics.totalsFoldedThrough(pool),
    // workers
    workerUpsert: (info: Parameters<typeof workers.workerUpsert>[1]) => workers.workerUpsert(pool, info),
    workerListActive: (activeWithinMs: number) => workers.workerListActive(pool, activeWithinMs),
    workerRemove: (id: string) => workers.workerRemove(pool, id),
    workersPrune: (olderThanMs: number) => workers.workersPrune(pool, olderThanMs),
    /** True when the database answers. */
    ping: async () => {
      await pool.query('SELECT 1');
      return true;
    },
  };
  return store satisfies TickStore & WorkerStore & RecoveryStore & CommandStore & RetentionStore;
}
export { transaction } from './transaction';
