/**
 * @module dashboard/ui/target — a job's target on pages: in words for lists (`POST https://…`, `invoke fn:alias`),
 * in full on the job page. HTTP header values go through maskTarget, like every API response: secrets never render.
 */
import { maskTarget, targetWords, type Job } from '@jobs/core';
import type { FC } from 'hono/jsx';
import { formatJson } from '../format';
import { Pre } from './components';

export const TargetWords: FC<{ job: Job }> = ({ job }) => <code class="wrap-anywhere">{targetWords(job)}</code>;

/** The `<dt>`/`<dd>` pairs of a job's target, for a `dl.props`. */
export const TargetDetails: FC<{ job: Job }> = ({ job: unmasked }) => {
  const job = maskTarget(unmasked);
  if (job.command !== null) {
    return (
      <>
        <dt>Command</dt>
        <dd>
          <Pre text={job.command} label="Command" />
        </dd>
      </>
    );
  }
  if (job.http) {
    const headers = Object.entries(job.http.headers);
    return (
      <>
        <dt>HTTP request</dt>
        <dd>
          <TargetWords job={job} />
        </dd>
        <dt>Headers</dt>
        <dd>
          {headers.length === 0 ? (
            <p class="muted">none besides the scheduler's own</p>
          ) : (
            <Pre text={headers.map(([name, value]) => `${name}: ${value}`).join('\n')} label="Headers" />
          )}
        </dd>
        <dt>Body</dt>
        <dd>
          {job.http.body === undefined ? (
            <span class="muted">the execution's payload, as JSON</span>
          ) : (
            <Pre text={typeof job.http.body === 'string' ? job.http.body : formatJson(job.http.body)} label="Body" />
          )}
        </dd>
      </>
    );
  }
  if (job.lambda) {
    return (
      <>
        <dt>Lambda</dt>
        <dd>
          <TargetWords job={job} /> <span class="muted">(RequestResponse, the payload as the event)</span>
        </dd>
      </>
    );
  }
  return (
    <>
      <dt>Handler</dt>
      <dd>
        <code>{job.handler}</code>
      </dd>
    </>
  );
};
