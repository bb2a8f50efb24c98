/**
 * @module metrics/snapshot — Prometheus series whose values are read at scrape time (from PostgreSQL and Redis),
 * rendered through prom-client's registry. prom-client's own Counter and Histogram only count what this process
 * observes; a system-wide counter or histogram read from the roll-ups is registered as a plain metric object
 * (name, help, type, get) holding the values read, which the registry formats like any other.
 */
import { Registry, type Metric } from 'prom-client';

export type Labels = Record<string, string>;
export type SampleType = 'gauge' | 'counter' | 'histogram';

interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** Cumulative bucket counts of one labelled histogram: `le[i]` values <= `bounds[i]`, `count` in all, their `sum`. */
export interface HistogramValues {
  labels: Labels;
  le: readonly number[];
  count: number;
  sum: number;
}

/** A registry of values read once, for one scrape. */
export class SnapshotRegistry {
  readonly registry = new Registry();

  private add(name: string, help: string, type: SampleType, values: Sample[]): void {
    const metric = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values }),
    };
    this.registry.registerMetric(metric as unknown as Metric);
  }

  gauge(name: string, help: string, values: { labels: Labels; value: number }[]): void {
    this.add(name, help, 'gauge', values);
  }

  /** A counter read from monotonic totals (`name` ends in `_total`, as Prometheus names counters). */
  counter(name: string, help: string, values: { labels: Labels; value: number }[]): void {
    this.add(name, help, 'counter', values);
  }

  /** `bounds` in the histogram's unit (seconds); each value's `le` has one count per bound. */
  histogram(name: string, help: string, bounds: readonly number[], values: HistogramValues[]): void {
    const samples: Sample[] = [];
    for (const h of values) {
      bounds.forEach((bound, i) =>
        samples.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le: String(bound) }, value: h.le[i] ?? 0 }),
      );
      samples.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le: '+Inf' }, value: h.count });
      samples.push({ metricName: `${name}_sum`, labels: h.labels, value: h.sum });
      samples.push({ metricName: `${name}_count`, labels: h.labels, value: h.count });
    }
    this.add(name, help, 'histogram', samples);
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
