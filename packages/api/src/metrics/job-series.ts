/**
 * @module metrics/job-series — the per-job series of GET /metrics, for the jobs METRICS_JOBS chose: the time of each
 * one's last success and last failure (Unix seconds), and how many matching jobs METRICS_JOBS_MAX left out. A job
 * whose kept history has no such attempt has no sample of that series (alert on `absent()` for "never").
 */
import type { JobHealthRead } from '@jobs/store';
import type { SnapshotRegistry } from './snapshot';

const seconds = (at: Date) => at.getTime() / 1000;

/** Adds the per-job series of one scrape to `out`. */
export function addJobSeries(out: SnapshotRegistry, read: JobHealthRead): void {
  const labels = (j: JobHealthRead['jobs'][number]) => ({ job_id: j.id, job_name: j.name });
  out.gauge(
    'jobs_job_last_success_timestamp_seconds',
    'When the job last succeeded (an attempt finished succeeded), per job chosen by METRICS_JOBS.',
    read.jobs.flatMap((j) => (j.lastSuccessAt ? [{ labels: labels(j), value: seconds(j.lastSuccessAt) }] : [])),
  );
  out.gauge(
    'jobs_job_last_failure_timestamp_seconds',
    'When the job last failed (an attempt finished failed or dead), per job chosen by METRICS_JOBS.',
    read.jobs.flatMap((j) => (j.lastFailureAt ? [{ labels: labels(j), value: seconds(j.lastFailureAt) }] : [])),
  );
  out.gauge(
    'jobs_job_series_omitted',
    'Live jobs METRICS_JOBS matched that have no per-job series, because METRICS_JOBS_MAX was reached.',
    [{ labels: {}, value: Math.max(0, read.matched - read.jobs.length) }],
  );
}
