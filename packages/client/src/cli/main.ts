/**
 * @module cli/main — the `jobs` command line (`npm run jobs -- <command>`), on the typed client: parses the command
 * and its options (node:util parseArgs, strict per command), runs it, and maps what went wrong to the exit code:
 * 0 done, 1 failed (the API refused, could not be reached, or a step failed), 2 used wrongly. Never calls
 * process.exit.
 */
import { parseArgs } from 'node:util';
import type { JobsClient } from '../index';
import { applyCommands } from './apply';
import { backfillCommands } from './backfill';
import { CliError, UsageError, type CliIo, type CliTarget, type Command, type Ctx, type Values } from './context';
import { executionCommands } from './executions';
import { jobCommands } from './jobs';

export type { CliIo, CliTarget } from './context';

export const COMMANDS: Command[] = [...applyCommands, ...jobCommands, ...executionCommands, ...backfillCommands];

const GLOBAL = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
const GLOBAL_FLAGS = new Set(['--json', '--help', '-h']);

const usageLine = (c: Command) => `npm run jobs -- ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}`;

export const USAGE = [
  'usage: npm run jobs -- <command> [--json] [--help]',
  'commands:',
  ...COMMANDS.map((c) => `  ${c.name.padEnd(11)} ${c.summary}`),
  'every command: --json prints the result as JSON (on failure {"error": {...}}); --help its arguments and options',
  'environment: JOBS_API_URL (default http://127.0.0.1:8080), JOBS_API_KEY (the API key, when the API needs one)',
  'exit codes: 0 done, 1 failed, 2 used wrongly',
].join('\n');

/** `jobs <command> --help`: its usage line and what each argument and option means. */
export function commandHelp(command: Command): string {
  return [
    `usage: ${usageLine(command)} [--json]`,
    command.summary,
    ...command.help.map((l) => `  ${l}`),
    '  --json   print the result as JSON',
  ].join('\n');
}

/**
 * Runs one command line and returns its exit code.
 * @example const code = await runCli(['trigger', '7', '--payload', '{"x":1}'], api, io, { url, keySet: true });
 */
export async function runCli(
  argv: string[],
  api: JobsClient,
  io: CliIo,
  target: CliTarget = { url: 'the configured URL', keySet: false },
): Promise<number> {
  const json = argv.includes('--json');
  const ctx: Ctx = {
    api,
    io,
    target,
    json,
    sleep: io.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms))),
  };
  let command: Command | undefined;
  try {
    // Only --json and --help may come before the command; its own options come after it.
    const at = argv.findIndex((a) => !GLOBAL_FLAGS.has(a));
    const name = at === -1 ? undefined : argv[at]!;
    if (name?.startsWith('-')) throw new UsageError(`${name}: options come after the command`);
    if (name === 'help' || (name === undefined && (argv.includes('--help') || argv.includes('-h')))) {
      const topic = argv.slice(at + 1).find((a) => !a.startsWith('-'));
      const about = topic === undefined ? undefined : COMMANDS.find((c) => c.name === topic);
      if (topic !== undefined && !about) throw new UsageError(`no command ${JSON.stringify(topic)}`);
      io.out(about ? commandHelp(about) : USAGE);
      return 0;
    }
    if (name === undefined) throw new UsageError('give a command');
    command = COMMANDS.find((c) => c.name === name);
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
    const rest = [...argv];
    rest.splice(at, 1);
    let values: Values;
    let args: string[];
    try {
      const parsed = parseArgs({
        args: rest,
        allowPositionals: true,
        strict: true,
        options: { ...command.options, ...GLOBAL },
      });
      values = parsed.values as Values;
      args = parsed.positionals;
    } catch (error) {
      throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
    }
    if (values.help) {
      io.out(commandHelp(command));
      return 0;
    }
    const [min, max] = command.args;
    if (args.length < min) throw new UsageError(`${command.name}: missing argument (${command.synopsis})`);
    if (args.length > max) throw new UsageError(`${command.name}: unexpected argument ${JSON.stringify(args[max])}`);
    return await command.run(ctx, args, values);
  } catch (error) {
    if (!(error instanceof CliError)) {
      // A fault of ours, not the user's or the API's: say so rather than pretend it is one of theirs.
      io.err(`jobs: unexpected error: ${(error as Error).stack ?? String(error)}`);
      if (json) io.out(JSON.stringify({ error: { code: 'internal', message: (error as Error).message } }, null, 2));
      return 1;
    }
    if (error instanceof UsageError) {
      io.err(`${error.message}\n${command ? `usage: ${usageLine(command)}\n(--help for more)` : USAGE}`);
    } else io.err(error.message);
    if (json) io.out(JSON.stringify({ error: { message: error.message, ...error.detail } }, null, 2));
    return error.exitCode;
  }
}
