/**
 * The `jobs` command line: `npm run jobs -- apply jobs.yaml --dry-run`. Reads JOBS_API_URL (default the local stack)
 * and JOBS_API_KEY; everything else is in @jobs/client's cli/.
 */
import { createJobsClient } from '@jobs/client';
import { runCli } from '@jobs/client/cli';

const api = createJobsClient({
  baseUrl: process.env.JOBS_API_URL || 'http://127.0.0.1:8080',
  apiKey: process.env.JOBS_API_KEY || undefined,
});
const code = await runCli(process.argv.slice(2), api, {
  out: (text) => void (text && process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)),
  err: (text) => void process.stderr.write(`${text}\n`),
});
process.exitCode = code;
