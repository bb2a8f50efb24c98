/** @module logger — structured JSON logs (pino) and the transition sink that writes one line per state change. */
import type { Logger, Transition, TransitionSink } from '@jobs/core';
import pino from 'pino';

export type AppLogger = pino.Logger & Logger;

/** Paths that may hold secrets; pino replaces their values before anything is written. */
const REDACT = [
  'databaseUrl',
  'redisUrl',
  'apiKeys',
  'metricsToken',
  'password',
  '*.password',
  'authorization',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
];

/** The stream each logger writes to, for the transition sink's batched fast path. */
const destinations = new WeakMap<object, pino.DestinationStream>();

export function createLogger(options: {
  level: string;
  sync?: boolean;
  destination?: pino.DestinationStream;
}): AppLogger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: options.sync ?? false });
  const logger = pino(
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
  destinations.set(logger, destination);
  return logger;
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
  if (t.by !== undefined) record.by = t.by;
  return record;
}

/**
 * One info line per transition. For a logger made by createLogger, a batch of transitions is serialised in one go
 * and written with one call, in the same shape pino writes (`level`, `time`, then the record): a busy worker emits
 * tens of thousands of these a second, and per-line logger calls cost more than the jobs they describe.
 * Transition records hold no secrets (no output, payload or configuration), so pino's redaction is not needed.
 */
export function logSink(logger: Logger & { isLevelEnabled?: (level: string) => boolean }): TransitionSink {
  const enabled = () => !logger.isLevelEnabled || logger.isLevelEnabled('info');
  const destination = destinations.get(logger);
  return {
    get enabled() {
      return enabled();
    },
    emit(transitions) {
      if (!enabled() || transitions.length === 0) return;
      if (!destination) {
        for (const t of transitions) logger.info(transitionRecord(t));
        return;
      }
      const head = `{"level":"info","time":"${new Date().toISOString()}",`;
      let lines = '';
      for (const t of transitions) lines += head + JSON.stringify(transitionRecord(t)).slice(1) + '\n';
      destination.write(lines);
    },
  };
}

/** Sends every transition to each sink; one failing sink never stops the others or the caller. */
export function fanOut(...sinks: TransitionSink[]): TransitionSink {
  return {
    get enabled() {
      return sinks.some((s) => s.enabled !== false);
    },
    emit(transitions) {
      for (const sink of sinks) {
        if (sink.enabled === false) continue;
        try {
          sink.emit(transitions);
        } catch {
          // Sinks are observers; execution must not fail because one of them did.
        }
      }
    },
  };
}
