/**
 * @module emf — CloudWatch metrics as Embedded Metric Format log lines: one JSON line on stdout per set of
 * dimension values, which CloudWatch Logs turns into metrics with no API call (and no extra permission) from the
 * Lambda. Format: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 */

/** The units this project publishes in (a subset of CloudWatch's). */
type EmfUnit = 'Count' | 'Seconds' | 'Milliseconds' | 'Percent' | 'None';

interface EmfMetric {
  name: string;
  unit: EmfUnit;
  value: number;
}

export interface EmfWriter {
  /**
   * Writes one line with `metrics` under `dimensions` (name -> value; none for a metric of the whole system).
   * @example metrics.put({ Lane: 'long' }, [{ name: 'QueueDepth', unit: 'Count', value: 3 }])
   */
  put(dimensions: Record<string, string>, metrics: readonly EmfMetric[], at?: Date): void;
}

/** CloudWatch takes at most 100 metrics per EMF document and 30 dimensions per set. */
const MAX_METRICS = 100;
const MAX_DIMENSIONS = 30;

/** The EMF document for one set of values. */
function emfDocument(
  namespace: string,
  dimensions: Record<string, string>,
  metrics: readonly EmfMetric[],
  at: Date,
): Record<string, unknown> {
  const names = Object.keys(dimensions);
  if (metrics.length === 0 || metrics.length > MAX_METRICS)
    throw new Error(`an EMF line carries 1 to ${MAX_METRICS} metrics (got ${metrics.length})`);
  if (names.length > MAX_DIMENSIONS)
    throw new Error(`an EMF dimension set has at most ${MAX_DIMENSIONS} dimensions (got ${names.length})`);
  const doc: Record<string, unknown> = {
    _aws: {
      Timestamp: at.getTime(),
      CloudWatchMetrics: [
        { Namespace: namespace, Dimensions: [names], Metrics: metrics.map((m) => ({ Name: m.name, Unit: m.unit })) },
      ],
    },
    ...dimensions,
  };
  // A non-finite value would make CloudWatch drop the whole line.
  for (const m of metrics) doc[m.name] = Number.isFinite(m.value) ? m.value : 0;
  return doc;
}

/**
 * @example
 *   const metrics = createEmfWriter({ namespace: 'jobs-scheduler/production' });
 *   metrics.put({ Lane: 'long' }, [{ name: 'OldestWaitingAgeSeconds', unit: 'Seconds', value: 42 }]);
 */
export function createEmfWriter(options: { namespace: string; write?: (line: string) => void }): EmfWriter {
  // Synchronous on Linux for files and pipes (a Lambda's stdout), so a line is out before the container freezes.
  const write = options.write ?? ((line: string) => void process.stdout.write(line));
  return {
    put(dimensions, metrics, at = new Date()) {
      write(`${JSON.stringify(emfDocument(options.namespace, dimensions, metrics, at))}\n`);
    },
  };
}
