/** @module ports/tracing — spans, for the passes that trace what they do. */
/** What a span may carry: ids, counts, lanes and outcomes; never payloads, output or secrets. */
export type SpanAttributes = Record<string, string | number | boolean>;

/** One span in progress (OpenTelemetry's, in functions/tracing.ts). */
export interface TraceSpan {
  /** W3C `traceparent` of this span: what a child started elsewhere (a row, a command, a request) gives as parent. */
  readonly traceparent: string;
  setAttributes(attributes: SpanAttributes): void;
  updateName(name: string): void;
  /** Ends the span; with `error`, its status is an error with that message. */
  end(error?: string | null): void;
}

/**
 * Starts spans. Absent (undefined or null) wherever tracing is off: callers then do nothing at all.
 * @example const span = tracing.start('attempt', { parent: execution.traceparent, attributes: { 'job.id': '7' } })
 */
export interface Tracing {
  start(
    name: string,
    options?: { parent?: string | null; kind?: 'server' | 'client' | 'internal'; attributes?: SpanAttributes },
  ): TraceSpan;
}
