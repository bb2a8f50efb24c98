/** @module logger — structured JSON logs (pino) and the transition sink that writes one line per state change. */
import type { Logger, Transition, TransitionSink } from '@jobs/core';
import pino from 'pino';

export type AppLogger = pino.Logger & Logger;

/** Paths that may hold secrets; pino replaces their values before anything is written. */
const REDACT = [
  'databaseUrl',
  'redisUrl',
  'apiKeys',
  'password',
  '*.password',
  'authorization',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function createLogger(options: { level: string; sync?: boolean; destination?: pino.DestinationStream }): AppLogger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: options.sync ?? false });
  return pino(
    {
      level: options.level,
      base: undefined,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    destination,
  ) as AppLogger;
}

/** The wire shape of a transition: snake_case, ISO time; shared by the log and the EventBridge publisher. */
export function transitionRecord(t: Transition): Record<string, unknown> {
  const record: Record<string, unknown> = {
    event: t.event,
    job_id: t.jobId,
    execution_id: t.executionId,
    attempt: t.attempt,
    from: t.from,
    to: t.to,
    worker_id: t.workerId,
    at: t.at.toISOString(),
  };
  if (t.trigger !== undefined) record.trigger = t.trigger;
  if (t.error) record.error = t.error;
  if (t.durationMs !== undefined && t.durationMs !== null) record.duration_ms = t.durationMs;
  if (t.exitCode !== undefined && t.exitCode !== null) record.exit_code = t.exitCode;
  return record;
}

export function logSink(logger: Logger & { isLevelEnabled?: (level: string) => boolean }): TransitionSink {
  return {
    emit(transitions) {
      // Building the record costs more than pino's own level check; skip it when info is off.
      if (logger.isLevelEnabled && !logger.isLevelEnabled('info')) return;
      for (const t of transitions) logger.info(transitionRecord(t));
    },
  };
}

/** Sends every transition to each sink; one failing sink never stops the others or the caller. */
export function fanOut(...sinks: TransitionSink[]): TransitionSink {
  return {
    emit(transitions) {
      for (const sink of sinks) {
        try {
          sink.emit(transitions);
        } catch {
          // Sinks are observers; execution must not fail because one of them did.
        }
      }
    },
  };
}
