/**
 * The SST stand-ins (scripts/infra-graph/sst-globals.ts, shared with `npm run cost`) for vitest: every evaluation
 * resets the module cache first, so the infra files run again for every scenario.
 */
import { vi } from 'vitest';
import { evaluateSstConfig as evaluate, type Scenario } from '../../scripts/infra-graph/sst-globals';

export * from '../../scripts/infra-graph/sst-globals';

/** evaluateSstConfig with vitest's module reset. */
export function evaluateSstConfig(scenario: Omit<Scenario, 'resetModules'>) {
  return evaluate({ ...scenario, resetModules: () => vi.resetModules() });
}
