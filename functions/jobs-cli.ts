/**
 * The `jobs` command line: `npm run jobs -- apply jobs.yaml --dry-run`. Reads JOBS_API_URL (default the local stack)
 * and JOBS_API_KEY; everything else is in @jobs/client's cli/.
 */
import { createJobsClient } from '@jobs/client';
import { runCli } from '@jobs/client/cli';

const REQUEST_TIMEOUT_MS = 30_000;
const url = process.env.JOBS_API_URL || 'http://127.0.0.1:8080';
const apiKey = process.env.JOBS_API_KEY || undefined;

/** Why JOBS_API_URL cannot be used, or null. A URL with a password in it is never echoed. */
function urlProblem(value: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    parsed = new URL('invalid:');
  }
  if (parsed.username || parsed.password) return 'JOBS_API_URL must not carry a user or password: set JOBS_API_KEY';
  if (!['http:', 'https:'].includes(parsed.protocol))
    return `JOBS_API_URL is not an http(s) URL: ${JSON.stringify(value)} (e.g. http://127.0.0.1:8080)`;
  return null;
}

const problem = urlProblem(url);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exitCode = 2;
} else {
  const api = createJobsClient({ baseUrl: url, apiKey, timeoutMs: REQUEST_TIMEOUT_MS });
  process.exitCode = await runCli(
    process.argv.slice(2),
    api,
    {
      out: (text) => void (text && process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)),
      err: (text) => void process.stderr.write(`${text}\n`),
    },
    { url, keySet: apiKey !== undefined, timeoutMs: REQUEST_TIMEOUT_MS },
  );
}
