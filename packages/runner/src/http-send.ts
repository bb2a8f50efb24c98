/**
 * @module http-send — one HTTP request through undici's dispatcher with a plain handler: the response body goes
 * straight into a capped buffer (no stream objects per request: measured at a third of the adapter's cost under
 * `npm run bench -- --only=http`), reading stops at the cap, and a cancel aborts the request at once.
 * The handler is one object whose methods live on its prototype: no closures per request beyond the promise's.
 */
import type { Cancellation } from '@jobs/core';
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
  /** Flat name, value list (undici's array form). */
  headers: string[];
  body: string | undefined;
  timeoutMs: number;
  /** Response header names to keep, lower case. */
  keep: ReadonlySet<string>;
  /** The request is aborted when the attempt must stop. */
  cancel: Cancellation;
}

export class Aborted extends Error {}

export function send(agent: Agent, output: CappedOutput, o: SendOptions): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const handler = new SendHandler(output, o.keep, resolve, reject);
    if (o.cancel.onAbort) o.cancel.onAbort(() => handler.cancel());
    else o.cancel.signal.addEventListener('abort', () => handler.cancel(), { once: true });
    if (handler.settled) return;
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
      handler,
    );
  });
}

class SendHandler implements Dispatcher.DispatchHandlers {
  settled = false;
  private abortRequest: ((error?: Error) => void) | null = null;
  private status = 0;
  private readonly headers: Record<string, string> = {};
  private cut = false;

  constructor(
    private readonly output: CappedOutput,
    private readonly keep: ReadonlySet<string>,
    private readonly resolve: (sent: Sent) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  cancel(): void {
    this.settle(new Aborted('aborted'));
    this.abortRequest?.(new Aborted('aborted'));
  }

  onConnect(abort: (error?: Error) => void): void {
    this.abortRequest = abort;
    if (this.settled) abort(new Aborted('aborted'));
  }

  onHeaders(statusCode: number, raw: Buffer[]): boolean {
    this.status = statusCode;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i]!.toString('latin1').toLowerCase();
      if (!this.keep.has(name)) continue;
      const value = raw[i + 1]!.toString('latin1');
      const before = this.headers[name];
      this.headers[name] = before === undefined ? value : `${before}, ${value}`;
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.output.write(chunk);
    if (this.output.full && !this.cut) {
      this.cut = true;
      // What was read is the outcome; the rest of the body is never downloaded.
      this.settle(null);
      this.abortRequest?.(new Aborted('output cap'));
    }
    return true;
  }

  onComplete(): void {
    this.settle(null);
  }

  onError(error: Error): void {
    this.settle(error);
  }

  private settle(error: Error | null): void {
    if (this.settled) return;
    this.settled = true;
    if (error) this.reject(error);
    else this.resolve({ status: this.status, headers: this.headers, cut: this.cut });
  }
}
