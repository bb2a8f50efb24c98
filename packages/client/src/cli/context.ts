/**
 * @module cli/context — what every `jobs` command shares: the API client and where it points, text or `--json`
 * output, the error types that set the exit code, and `call`, which turns an unreachable URL, a missing or refused
 * key and any other failed response into one message that names the URL and JOBS_API_KEY.
 */
import { errorMessage, type JobsClient } from '../index';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Waits between polls of `logs --follow` (injected so tests need not sleep). */
  sleep?(ms: number): Promise<void>;
}

/** Where the client points: named in the messages of a failed call (never the key itself). */
export interface CliTarget {
  url: string;
  /** Whether JOBS_API_KEY is set. */
  keySet: boolean;
  /** Each request's time limit, for the message of a request that timed out. */
  timeoutMs?: number;
}

export interface Ctx {
  api: JobsClient;
  io: CliIo;
  target: CliTarget;
  json: boolean;
  sleep(ms: number): Promise<void>;
}

/** A failed command: its message goes to stderr (and in `--json`, an error document to stdout); exit code 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    readonly detail: { code?: string; status?: number } = {},
  ) {
    super(message);
  }
}

/** A command used wrongly: exit code 2, and the command's usage after the message. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2, { code: 'usage' });
  }
}

type ApiResult<T> = { data?: T; error?: unknown; response: Response };

/**
 * Makes one API call and returns its data, or throws a CliError saying what went wrong: the URL that could not be
 * reached, the key that is missing or refused, or the API's own message.
 * @example const job = await call(ctx, () => ctx.api.GET('/api/v1/jobs/{id}', { params: { path: { id } } }));
 */
export async function call<T>(ctx: Ctx, request: () => Promise<ApiResult<T>>): Promise<T> {
  let result: ApiResult<T>;
  try {
    result = await request();
  } catch (error) {
    throw unreachable(ctx.target, error);
  }
  if (!result.response.ok) throw refused(ctx.target, result.error, result.response);
  return result.data as T;
}

function unreachable(target: CliTarget, error: unknown): CliError {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    const limit = target.timeoutMs ? ` within ${target.timeoutMs / 1000} s` : '';
    return new CliError(`no answer from the jobs API at ${target.url}${limit} (JOBS_API_URL)`, 1, {
      code: 'timeout',
    });
  }
  const reason = e?.cause?.message ?? e?.message ?? String(error);
  return new CliError(`cannot reach the jobs API at ${target.url}: ${reason} (set JOBS_API_URL to its address)`, 1, {
    code: 'unreachable',
  });
}

function refused(target: CliTarget, error: unknown, response: Response): CliError {
  const body = error as { error?: { code?: string; message?: string } } | undefined;
  const apiCode = body?.error?.code;
  const detail = { code: apiCode ?? `http_${response.status}`, status: response.status };
  const message = errorMessage(error, response);
  if (response.status === 401) {
    return new CliError(
      target.keySet
        ? `the jobs API at ${target.url} refused the key in JOBS_API_KEY: ${message}`
        : `the jobs API at ${target.url} needs an API key: set JOBS_API_KEY (${message})`,
      1,
      detail,
    );
  }
  if (!body?.error?.message)
    return new CliError(`${message} from ${target.url}: is JOBS_API_URL the jobs API's address?`, 1, detail);
  return new CliError(message, 1, detail);
}

/**
 * Whether an error concerns the whole command rather than the one item it was about (a spec, an execution): the API
 * could not be reached, or the key is missing, refused or below the role needed. Those stop a command at once
 * instead of being repeated for every item.
 */
export function isFatal(error: unknown): boolean {
  if (!(error instanceof CliError)) return true;
  const status = error.detail.status;
  return status === undefined || status === 401 || status === 403;
}

/** Prints a command's result: the value as JSON with `--json`, else the text. */
export function emit(ctx: Ctx, value: unknown, text: () => string): void {
  ctx.io.out(ctx.json ? JSON.stringify(value, null, 2) : text());
}

/** Tab-separated rows, a cell for each column; absent values as "-". */
export function table(rows: unknown[][]): string {
  return rows
    .map((r) => r.map((c) => (c === null || c === undefined || c === '' ? '-' : String(c))).join('\t'))
    .join('\n');
}

/** A positive integer option (`--limit 20`), or a usage error naming it. */
export function positiveInt(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9][0-9]{0,8}$/.test(value)) throw new UsageError(`--${option} must be a positive whole number`);
  return Number(value);
}

/** An execution or job id as the API takes it (digits), or a usage error. */
export function idArg(value: string, what: string): string {
  if (!/^[1-9][0-9]{0,17}$/.test(value))
    throw new UsageError(`${what} must be a numeric id, not ${JSON.stringify(value)}`);
  return value;
}

/** Parses JSON given on the command line, or a usage error naming the option. */
export function jsonArg(text: string, option: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--${option} must be JSON: ${(error as Error).message}`);
  }
}

type OptionSpec = { type: 'string' | 'boolean'; short?: string };
export type Values = Record<string, string | boolean | undefined>;

/** One `jobs` command: its usage line, its `--help` text, its options, and what it does. */
export interface Command {
  name: string;
  /** What follows `jobs <name>` in the usage line. */
  synopsis: string;
  summary: string;
  /** Lines of `jobs <name> --help` after the usage line: arguments and options. */
  help: string[];
  options: Record<string, OptionSpec>;
  /** How many positional arguments it takes. */
  args: [min: number, max: number];
  run(ctx: Ctx, args: string[], values: Values): Promise<number>;
}

export const str = (values: Values, name: string): string | undefined => values[name] as string | undefined;
export const flag = (values: Values, name: string): boolean => values[name] === true;
