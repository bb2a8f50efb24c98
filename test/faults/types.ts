/** Shapes shared by the fault scenarios and the runner. */
import type { Books } from './books';
import type { Servers } from './servers';

export interface RunContext {
  servers: Servers;
  /** The queue the scenario's processes use (scenarios marked `postgresQueue` run on both). */
  queue: 'redis' | 'postgres';
  logRoot: string;
  seed: number;
  log(message: string): void;
}

export interface ScenarioResult {
  name: string;
  acknowledged: number;
  lost: number;
  duplicated: number;
  /** What the recovery column shows, e.g. "p50 2.31s max 2.87s (kill → replacement start)". */
  recovery: string;
  pass: boolean;
  problems: string[];
  notes: string[];
  ms: number;
}

export interface ScenarioDef {
  name: string;
  /**
   * BUG: a known engine bug makes this scenario fail; it is skipped in a full run (and in CI) and runs when named
   * on the command line or with FAULTS_KNOWN_BUGS=1. The text says what fails and why.
   */
  knownBug?: string;
  /** The scenario applies to the PostgreSQL queue too: the suite runs it a second time with QUEUE_BACKEND=postgres. */
  postgresQueue?: boolean;
  run(ctx: RunContext): Promise<Omit<ScenarioResult, 'name' | 'ms'>>;
}

/** A result from the books plus the scenario's own checks. */
export function verdict(
  books: Books,
  own: { problems: string[]; notes?: string[]; recovery?: string },
): Omit<ScenarioResult, 'name' | 'ms'> {
  const problems = [...books.problems, ...own.problems];
  return {
    acknowledged: books.acknowledged,
    lost: books.lost,
    duplicated: books.duplicated,
    recovery: own.recovery ?? '-',
    pass: problems.length === 0,
    problems,
    notes: [`${books.chains} chains, drained in ${(books.drainMs / 1000).toFixed(1)}s`, ...(own.notes ?? [])],
  };
}
