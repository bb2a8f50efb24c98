/**
 * @module cli/backfill — runs a job's past fire times over a range of any length. The API takes at most 1,000 fire
 * times a call (more is a 400 that creates nothing), so the range is walked in consecutive chunks: each chunk's
 * length is guessed from the density of the one before, and halved when the API finds it holds too many. A backfill
 * skips fire times that already have an execution, so running it again after an interruption is safe.
 */
import type { components } from '../index';
import { call, CliError, emit, flag, str, UsageError, type Command, type Ctx } from './context';
import { resolveJob } from './jobs';

type Result = components['schemas']['BackfillResult'];

/** Fire times a chunk aims at: below the API's cap per call (the core's MAX_BACKFILL), so a denser stretch still fits. */
const AIM = 800;

interface BackfillSummary {
  job_id: string;
  from: string;
  to: string;
  dry_run: boolean;
  /** Calls that covered a chunk of the range. */
  chunks: number;
  fire_times: number;
  created: number;
  execution_ids: string[];
  already_run: Result['already_run'];
}

/**
 * Backfills [from, to) chunk by chunk, calling `progress` after each; throws a CliError naming what was done and
 * where to resume when a call fails.
 * @example await backfillRange(ctx, { jobId: '7', from, to, dryRun: false }, (p) => console.error(p.done))
 */
async function backfillRange(
  ctx: Ctx,
  input: { jobId: string; from: Date; to: Date; dryRun: boolean },
  progress: (p: { chunkFrom: Date; chunkTo: Date; result: Result; fraction: number }) => void,
): Promise<BackfillSummary> {
  const { jobId, from, to, dryRun } = input;
  const summary: BackfillSummary = {
    job_id: jobId,
    from: from.toISOString(),
    to: to.toISOString(),
    dry_run: dryRun,
    chunks: 0,
    fire_times: 0,
    created: 0,
    execution_ids: [],
    already_run: [],
  };
  const span = to.getTime() - from.getTime();
  let cursor = from.getTime();
  let chunkMs = span;
  while (cursor < to.getTime()) {
    const end = Math.min(cursor + chunkMs, to.getTime());
    let result: Result;
    try {
      result = await call(ctx, () =>
        ctx.api.POST('/api/v1/jobs/{id}/backfill', {
          params: { path: { id: jobId } },
          body: { from: new Date(cursor).toISOString(), to: new Date(end).toISOString(), dry_run: dryRun },
        }),
      );
    } catch (error) {
      if (error instanceof CliError && tooMany(error) && end - cursor > 1) {
        chunkMs = Math.max(1, Math.floor((end - cursor) / 2));
        continue;
      }
      if (!(error instanceof CliError) || summary.chunks === 0) throw error;
      throw new CliError(
        `${error.message}\nbackfill stopped at ${new Date(cursor).toISOString()} after ${summary.chunks} chunk(s): ` +
          `${summary.created} execution(s) created${dryRun ? ' (dry run)' : ''}; resume with --from ${new Date(cursor).toISOString()}`,
        error.exitCode,
        error.detail,
      );
    }
    summary.chunks++;
    summary.fire_times += result.fire_times.length;
    summary.created += result.created;
    summary.execution_ids.push(...result.execution_ids);
    summary.already_run.push(...result.already_run);
    progress({ chunkFrom: new Date(cursor), chunkTo: new Date(end), result, fraction: (end - from.getTime()) / span });
    const covered = end - cursor;
    cursor = end;
    // Aim the next chunk at AIM fire times by this one's density; never more than four times longer.
    const n = result.fire_times.length;
    chunkMs = n === 0 ? covered * 4 : Math.max(1, Math.min(covered * 4, Math.floor((covered * AIM) / n)));
  }
  return summary;
}

/** The API's 400 for a range that holds more fire times than one call takes. */
const tooMany = (error: CliError) => error.detail.status === 400 && /more than [0-9,]+ fire times/.test(error.message);

/** An instant on the command line: a date (midnight UTC) or a date-time with Z or an offset. */
function instantArg(value: string, option: string): Date {
  const ok =
    /^\d{4}-\d{2}-\d{2}$/.test(value) ||
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(value);
  const date = new Date(value);
  if (!ok || Number.isNaN(date.getTime()))
    throw new UsageError(
      `--${option} must be a date (2025-03-08, midnight UTC) or a date-time with an offset (2025-03-08T06:00:00Z), not ${JSON.stringify(value)}`,
    );
  return date;
}

const backfill: Command = {
  name: 'backfill',
  synopsis: 'JOB --from INSTANT [--to INSTANT] [--dry-run]',
  summary: 'run the fire times a job had in a past range, any length (split into calls of at most 1,000)',
  help: [
    'JOB is a job id, or its name',
    '--from INSTANT   first instant of the range (inclusive): 2025-03-08 (midnight UTC) or 2025-03-08T06:00:00+01:00',
    '--to INSTANT     end of the range (exclusive; default now; not in the future)',
    '--dry-run        list the fire times; create nothing',
    'each chunk prints a progress line to stderr; fire times that already have an execution are skipped, so a',
    'backfill that stopped can be run again (it says where to resume)',
  ],
  options: { from: { type: 'string' }, to: { type: 'string' }, 'dry-run': { type: 'boolean' } },
  args: [1, 1],
  async run(ctx, [ref], values) {
    const fromText = str(values, 'from');
    if (fromText === undefined) throw new UsageError('give --from');
    const from = instantArg(fromText, 'from');
    const toText = str(values, 'to');
    const to = toText === undefined ? new Date() : instantArg(toText, 'to');
    if (to <= from) throw new UsageError('--to must be after --from');
    const dryRun = flag(values, 'dry-run');
    const jobId = await resolveJob(ctx, ref!);
    const summary = await backfillRange(ctx, { jobId, from, to, dryRun }, (p) => {
      const r = p.result;
      ctx.io.err(
        `${(p.fraction * 100).toFixed(0).padStart(3)}%  ${p.chunkFrom.toISOString()} .. ${p.chunkTo.toISOString()}: ` +
          `${r.fire_times.length} fire time(s), ${dryRun ? 'dry run' : `${r.created} created`}, ${r.already_run.length} already run`,
      );
    });
    emit(
      ctx,
      summary,
      () =>
        `${dryRun ? 'dry run: ' : ''}${summary.fire_times} fire time(s) in ${summary.chunks} call(s); ` +
        `${dryRun ? 'would create' : 'created'} ${dryRun ? summary.fire_times - summary.already_run.length : summary.created}, ` +
        `${summary.already_run.length} already run`,
    );
    return 0;
  },
};

export const backfillCommands: Command[] = [backfill];
