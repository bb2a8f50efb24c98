/**
 * @module tracing — the Tracing port (packages/core/src/ports/tracing.ts) on the OpenTelemetry SDK, exporting over OTLP/HTTP.
 * Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set: the SDK is imported dynamically here, so a process without
 * it never loads a byte of it, and every caller holds `null` and starts no span at all.
 *
 * Parents travel as W3C `traceparent` strings (a request header, an execution row, a command's environment), so
 * spans are linked explicitly and no async context manager runs on the hot path.
 */
import { isTraceparent, type SpanAttributes, type TraceSpan, type Tracing } from '@jobs/core';

export interface TracingConfig {
  /** OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces. */
  url: string;
  serviceName: string;
}

export interface TracingProvider extends Tracing {
  /** Exports what has ended (a Lambda calls this before it returns: a frozen container exports nothing). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** @example const tracing = await createTracing({ url: 'http://127.0.0.1:4318/v1/traces', serviceName: 'jobs-api' }) */
export async function createTracing(config: TracingConfig): Promise<TracingProvider> {
  const [api, sdk, exporter, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const provider = new sdk.NodeTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new sdk.BatchSpanProcessor(new exporter.OTLPTraceExporter({ url: config.url }))],
  });
  const tracer = provider.getTracer('jobs-scheduler');
  const kinds = { server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, internal: api.SpanKind.INTERNAL } as const;

  const parentContext = (traceparent: string | null | undefined) => {
    const m = isTraceparent(traceparent) ? traceparent.split('-') : null;
    if (!m) return api.ROOT_CONTEXT;
    const spanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16) & 1, isRemote: true };
    return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
  };

  return {
    start(name, options = {}): TraceSpan {
      const span = tracer.startSpan(
        name,
        { kind: kinds[options.kind ?? 'internal'], attributes: options.attributes },
        parentContext(options.parent),
      );
      const sc = span.spanContext();
      return {
        traceparent: `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags.toString(16).padStart(2, '0')}`,
        setAttributes: (attributes: SpanAttributes) => void span.setAttributes(attributes),
        updateName: (n: string) => void span.updateName(n),
        end(error) {
          if (error) span.setStatus({ code: api.SpanStatusCode.ERROR, message: error });
          span.end();
        },
      };
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
