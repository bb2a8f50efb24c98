/**
 * @module http-send — one HTTP request through undici's dispatcher with a plain handler: the response body goes
 * straight into a capped buffer (no stream objects per request: measured at a third of the adapter's cost under
 * `npm run bench -- --only=http`), reading stops at the cap, and a cancel aborts the request at once.
 */
import type { Agent, Dispatcher } from 'undici';
import type { CappedOutput } from './output';

export interface Sent {
  status: number;
  /** The response headers asked for (lower-case names), others skipped without being decoded. */
  headers: Record<string, string>;
  /** True when the body was cut at the output's cap (the rest was not read). */
  cut: boolean;
}

export interface SendOptions {
  origin: string;
  /** Path and query. */
  path: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
  /** Response header names to keep, lower case. */
  keep: readonly string[];
  /** Called once when the attempt must stop; the request is then aborted. */
  onAbort: (listener: () => void) => void;
}

export class Aborted extends Error {}

export function send(agent: Agent, output: CappedOutput, o: SendOptions): Promise<Sent> {
  return new Promise((resolve, reject) => {
    let abort: ((error?: Error) => void) | null = null;
    let settled = false;
    let status = 0;
    const headers: Record<string, string> = {};
    let cut = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve({ status, headers, cut });
    };
    o.onAbort(() => {
      settle(new Aborted('aborted'));
      abort?.(new Aborted('aborted'));
    });
    if (settled) return;
    agent.dispatch(
      {
        origin: o.origin,
        path: o.path,
        method: o.method,
        headers: o.headers,
        body: o.body,
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
      },
      {
        onConnect(abortRequest) {
          abort = abortRequest;
          if (settled) abortRequest(new Aborted('aborted'));
        },
        onHeaders(statusCode, raw) {
          status = statusCode;
          for (let i = 0; i + 1 < raw.length; i += 2) {
            const name = raw[i]!.toString('latin1').toLowerCase();
            if (!o.keep.includes(name)) continue;
            const value = raw[i + 1]!.toString('latin1');
            headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
          }
          return true;
        },
        onData(chunk) {
          output.write(chunk);
          if (output.full && !cut) {
            cut = true;
            // What was read is the outcome; the rest of the body is never downloaded.
            settle(null);
            abort?.(new Aborted('output cap'));
          }
          return true;
        },
        onComplete() {
          settle(null);
        },
        onError(error) {
          settle(error);
        },
      },
    );
  });
}
