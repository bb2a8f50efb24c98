/**
 * @module cancellation — how a worker tells a running attempt to stop. An AbortSignal costs an allocation and an
 * event target per attempt, and most handlers never look at theirs; this one creates it on first use.
 */

/** What a runner receives: a signal that aborts when the attempt must stop (timeout, cancel, shutdown). */
export interface Cancellation {
  readonly signal: AbortSignal;
  /** Runs `listener` once when the attempt must stop, without building the signal (hot-path adapters use it). */
  onAbort?(listener: () => void): void;
}

export class LazyAbort implements Cancellation {
  private controller: AbortController | null = null;
  private listeners: (() => void)[] | null = null;
  /** Why the attempt was stopped; undefined while it may run. */
  reason: unknown = undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.reason = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener();
  }

  /** Runs `listener` once when the attempt is told to stop (at once if it already was). */
  onAbort(listener: () => void): void {
    if (this.aborted) listener();
    else (this.listeners ??= []).push(listener);
  }
}
