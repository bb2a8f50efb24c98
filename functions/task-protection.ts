/**
 * @module task-protection — ECS task scale-in protection for the container worker. While it runs an attempt that
 * could outlast its stop timeout (every long-lane attempt, and any whose timeout exceeds SHUTDOWN_GRACE), the task
 * asks the ECS agent (`PUT $ECS_AGENT_URI/task-protection/v1/state`) not to be chosen by a scale-in or a deployment
 * until that attempt's deadline has passed; when the last such attempt ends, it gives the protection up. Without
 * it, every scale-in or deploy would stop the task within 120 s and hand its long attempts back to start over.
 *
 * The agent answers `{"protection":{...}}`, `{"failure":{...}}` or `{"error":{...}}`
 * (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-scale-in-protection-endpoint.html); a failure
 * is logged and the attempt runs anyway (unprotected, as before).
 */
import type { Cancellation, Logger, Runner, RunResult, StartedExecution } from '@jobs/core';

/** ECS accepts 1 to 2,880 minutes. */
const MAX_MINUTES = 2880;
/** Beyond an attempt's timeout: the kill grace, recording the outcome, and the agent's minute granularity. */
const MARGIN_MS = 2 * 60_000;
/** Longest wait for the agent before an attempt starts anyway. */
const AGENT_TIMEOUT_MS = 3_000;

export interface TaskProtection {
  /** Protects the task until at least `untilMs` (epoch ms) while `id` runs; resolves once the agent answered. */
  hold(id: string, untilMs: number): Promise<void>;
  /** `id` ended; the protection is given up when nothing holds it any more. */
  release(id: string): Promise<void>;
  /** Epoch ms the task is protected until, by the agent's last answer; null when unprotected. */
  readonly protectedUntil: number | null;
}

/**
 * @example const protection = createTaskProtection({ agentUri: process.env.ECS_AGENT_URI!, logger });
 */
export function createTaskProtection(options: {
  agentUri: string;
  logger: Logger;
  now?: () => number;
  timeoutMs?: number;
}): TaskProtection {
  const now = options.now ?? Date.now;
  const url = `${options.agentUri.replace(/\/$/, '')}/task-protection/v1/state`;
  const holders = new Map<string, number>();
  let protectedUntil: number | null = null;
  let chain: Promise<void> = Promise.resolve();

  async function put(body: { ProtectionEnabled: boolean; ExpiresInMinutes?: number }): Promise<boolean> {
    try {
      const response = await fetch(url, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? AGENT_TIMEOUT_MS),
      });
      const answer = (await response.json().catch(() => null)) as {
        protection?: { ProtectionEnabled?: boolean };
        failure?: unknown;
        error?: unknown;
      } | null;
      if (response.ok && answer?.protection?.ProtectionEnabled === body.ProtectionEnabled) return true;
      options.logger.warn({
        event: 'worker.task_protection_failed',
        status: response.status,
        enable: body.ProtectionEnabled,
        answer: answer?.failure ?? answer?.error ?? answer,
      });
    } catch (error) {
      options.logger.warn({
        event: 'worker.task_protection_failed',
        enable: body.ProtectionEnabled,
        err: String(error),
      });
    }
    return false;
  }

  /** Brings the agent in line with what the running attempts need; one call at a time, in order. */
  function sync(): Promise<void> {
    chain = chain.then(async () => {
      const want = holders.size === 0 ? null : Math.max(...holders.values());
      if (want === null) {
        if (protectedUntil !== null && (await put({ ProtectionEnabled: false }))) protectedUntil = null;
        return;
      }
      if (protectedUntil !== null && protectedUntil >= want) return;
      const minutes = Math.min(MAX_MINUTES, Math.max(1, Math.ceil((want - now()) / 60_000)));
      if (await put({ ProtectionEnabled: true, ExpiresInMinutes: minutes })) {
        protectedUntil = now() + minutes * 60_000;
        options.logger.info({ event: 'worker.task_protected', minutes, attempts: holders.size });
      }
    });
    return chain;
  }

  return {
    hold(id, untilMs) {
      holders.set(id, untilMs);
      return sync();
    },
    release(id) {
      if (!holders.delete(id)) return chain;
      return sync();
    },
    get protectedUntil() {
      return protectedUntil;
    },
  };
}

/**
 * A runner that holds `protection` while it runs an attempt whose timeout exceeds `graceMs` (the time a stopping
 * task gives running attempts); shorter attempts finish within a stop anyway and cost no agent call.
 */
export function protectLongAttempts(
  runner: Runner,
  protection: TaskProtection,
  options: { graceMs: number; now?: () => number },
): Runner {
  const now = options.now ?? Date.now;
  return {
    async run(execution: StartedExecution, cancel: Cancellation): Promise<RunResult> {
      if (execution.timeoutMs <= options.graceMs) return runner.run(execution, cancel);
      await protection.hold(execution.id, now() + execution.timeoutMs + MARGIN_MS);
      try {
        return await runner.run(execution, cancel);
      } finally {
        void protection.release(execution.id);
      }
    },
  };
}
