/** Command-line flags of `npm run bench`: `--name=value` (or `--flag`); every size has a default. */

const SCENARIOS = ['drain', 'enqueue', 'latency', 'peer', 'memory', 'schedule', 'tick', 'metrics', 'http'] as const;
/** Diagnostics, run only when named in --only. */
const DIAGNOSTICS = ['profile', 'history', 'breakdown'] as const;
export type ScenarioName = (typeof SCENARIOS)[number] | (typeof DIAGNOSTICS)[number];

const DEFAULTS = {
  n: 20_000, // drain, peer, memory and http: jobs per run
  concurrency: 50, // drain, peer, latency and http worker
  'mem-concurrency': 100,
  'limited-share': 0.5, // drain: also run with this share of the jobs under a per-key limit (0: skip)
  'limited-keys': 1000, // distinct key values of those jobs
  'limited-per-key': 1, // their max_concurrency_per_key
  'single-n': 5_000, // enqueue: triggerJob calls
  'single-callers': 4,
  'bulk-n': 50_000,
  'bulk-batch': 1_000,
  'http-n': 5_000,
  'http-concurrency': 32,
  'latency-seconds': 10,
  'latency-warmup-seconds': 1,
  'latency-fraction': 0.5, // of the drain rate measured in this run
  'latency-rate': 0, // fixed triggers/s instead (0: from the drain rate)
  'latency-pool': 32, // PostgreSQL connections of the load generator
  'schedule-seconds': 40,
  'schedule-jobs': 5,
  'tick-jobs': 100_000,
  'tick-due': 10_000,
  'tick-repeats': 10, // none-due ticks per run
  'http-profile': 0, // http: 1 = profile its worker's drain window (instrument.mjs) and summarise it
  'metrics-executions': 5_000_000, // metrics: finished executions in the history
  'metrics-live': 1_000, // metrics: live rows (queued, a tenth running)
  'metrics-scrapes': 200, // metrics: scrapes per run
  'metrics-drain': 20_000, // metrics: no-op jobs a worker drains during the scrapes, kept topped up (0: idle)
  'profile-n': 20_000,
  'profile-rate': 1_000, // latency breakdown load (triggers/s)
  'history-n': 5_000_000, // history: executions built by SQL over 30 days
  'history-drain': 20_000, // history: jobs drained with and without the retention pass running
  'history-keep': 0, // history: 1 = stop after the reads and keep the schemas (named on stderr), for EXPLAIN; 2 = before ANALYZE
};

export type Options = { [K in keyof typeof DEFAULTS]: number } & {
  json: boolean;
  only: ScenarioName[];
  /** Runs per scenario; null: the scenario's default (3 for drain, peer, enqueue and tick; 1 otherwise). */
  runs: number | null;
  /** Also run the drain with LOG_LEVEL=info (stdout to /dev/null). */
  infoLog: boolean;
  /** Also run each drain with DATABASE_PREPARED_STATEMENTS=unnamed (the RDS Proxy mode), paired with the named one. */
  unnamedStatements: boolean;
  /** The queue of our drain runs; with `postgres`, the peer is BullMQ on its PostgreSQL backend. */
  queue: 'redis' | 'postgres';
  /** The peer's backend: BullMQ on Redis or on PostgreSQL (default: the same as `queue`). */
  peer: 'redis' | 'postgres' | null;
};

const HELP = `npm run bench -- [--json] [--only=drain,peer,...] [--runs=N] [--size=value ...]
scenarios: ${SCENARIOS.join(', ')} (default: all); diagnostics: ${DIAGNOSTICS.join(', ')} (only when named)
flags:
  --json            one JSON object per scenario per line on stdout (progress goes to stderr)
  --only=a,b        scenarios to run
  --runs=N          runs per scenario (default 3 for drain, peer, enqueue, tick; 1 for the rest); medians + spread
  --no-info-log     skip the extra drain run with LOG_LEVEL=info
  --unnamed-statements  pair every drain run with one whose worker sends statements unnamed (RDS Proxy mode)
  --queue=redis|postgres  the queue our drain and peer runs use (default redis); postgres: the peer is BullMQ on
                    its PostgreSQL backend
  --peer=redis|postgres  BullMQ's backend in the peer runs (default: the same as --queue)
sizes (defaults):
${Object.entries(DEFAULTS)
  .map(([k, v]) => `  --${k}=${v}`)
  .join('\n')}`;

export function parseOptions(argv: string[]): Options {
  const opts: Options = {
    ...DEFAULTS,
    json: false,
    only: [...SCENARIOS],
    runs: null,
    infoLog: true,
    unnamedStatements: false,
    queue: 'redis',
    peer: null,
  };
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown argument ${arg}\n${HELP}`);
    const [, key, value] = m as unknown as [string, string, string | undefined];
    if (key === 'help') {
      process.stdout.write(`${HELP}\n`);
      process.exit(0);
    } else if (key === 'json') opts.json = true;
    else if (key === 'no-info-log') opts.infoLog = false;
    else if (key === 'unnamed-statements') opts.unnamedStatements = true;
    else if (key === 'peer') {
      if (value !== 'redis' && value !== 'postgres') throw new Error('--peer must be redis or postgres');
      opts.peer = value;
    } else if (key === 'queue') {
      if (value !== 'redis' && value !== 'postgres') throw new Error('--queue must be redis or postgres');
      opts.queue = value;
    } else if (key === 'only') {
      const names = (value ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const known = [...SCENARIOS, ...DIAGNOSTICS] as string[];
      const bad = names.filter((n) => !known.includes(n));
      if (bad.length || names.length === 0)
        throw new Error(`--only: unknown scenario(s) ${bad.join(', ')}; known: ${known.join(', ')}`);
      opts.only = names as ScenarioName[];
    } else if (key === 'runs') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new Error('--runs must be a whole number >= 1');
      opts.runs = n;
    } else if (key in DEFAULTS) {
      const n = Number(value);
      if (value === undefined || !Number.isFinite(n) || n < 0)
        throw new Error(`--${key} needs a number (default ${DEFAULTS[key as keyof typeof DEFAULTS]})`);
      (opts as Record<string, unknown>)[key] = n;
    } else {
      throw new Error(`unknown flag --${key}\n${HELP}`);
    }
  }
  return opts;
}

/** What every scenario is given by the runner. */
export interface BenchContext {
  opts: Options;
  progress: (msg: string) => void;
  /** Our drain rate (LOG_LEVEL=warn) per run, for the ours/BullMQ ratio. */
  drainRates: number[];
}
