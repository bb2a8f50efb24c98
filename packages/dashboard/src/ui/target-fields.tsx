/**
 * @module dashboard/ui/target-fields — the job form's "what to run" fields: the target kind, then a shell command,
 * an HTTP request or a Lambda function. One component for every form that edits a target (create, and an edit form
 * prefilled with targetFormValues). Without JS every group shows and the kind picks the one sent; with CSS `:has()`
 * only the chosen group shows.
 */
import { HTTP_METHODS } from '@jobs/core';
import type { FC } from 'hono/jsx';
import type { TargetField } from '../target-input';
import { SelectField, TextArea, TextField } from './fields';

export const TARGET_LABELS: Record<TargetField | 'command', string> = {
  target: 'Runs',
  command: 'Command',
  http_method: 'Method',
  http_url: 'URL',
  http_headers: 'Headers',
  http_body: 'Body',
  lambda_function: 'Function',
  lambda_qualifier: 'Qualifier',
};

/** The target fields in the order the form shows them (the error summary follows it). */
export const TARGET_ORDER: readonly (TargetField | 'command')[] = [
  'target',
  'command',
  'http_method',
  'http_url',
  'http_headers',
  'http_body',
  'lambda_function',
  'lambda_qualifier',
];

type Values = Record<TargetField | 'command', string>;

export const TargetFields: FC<{ values: Values; errors: Partial<Record<TargetField | 'command', string>> }> = ({
  values: v,
  errors: e,
}) => (
  <>
    <SelectField
      name="target"
      label={TARGET_LABELS.target}
      value={v.target}
      error={e.target}
      options={[
        ['command', 'a shell command (or a handler, under Advanced)'],
        ['http', 'an HTTP request'],
        ['lambda', 'a Lambda function'],
      ]}
    />
    <div class="target-group" data-target="command">
      <TextArea
        name="command"
        label={TARGET_LABELS.command}
        value={v.command}
        error={e.command}
        hint="A shell command, run by a worker. (Or give a registered handler under Advanced.)"
      />
    </div>
    <div class="target-group" data-target="http">
      <div class="field-row">
        <SelectField
          name="http_method"
          label={TARGET_LABELS.http_method}
          value={v.http_method}
          error={e.http_method}
          options={HTTP_METHODS.map((m) => [m, m])}
        />
        <TextField
          name="http_url"
          label={TARGET_LABELS.http_url}
          value={v.http_url}
          error={e.http_url}
          mono
          placeholder="https://api.example.com/hooks/nightly"
          hint="Public addresses only, unless HTTP_TARGET_ALLOW lists it. Redirects are not followed."
        />
      </div>
      <TextArea
        name="http_headers"
        label={TARGET_LABELS.http_headers}
        value={v.http_headers}
        error={e.http_headers}
        hint="One “Name: value” per line. Secret-looking values (Authorization, *-Key, *token*) are stored but shown masked."
      />
      <TextArea
        name="http_body"
        label={TARGET_LABELS.http_body}
        value={v.http_body}
        error={e.http_body}
        hint="Empty: the payload, as JSON. Text starting with { or [ is sent as JSON, anything else as typed."
      />
    </div>
    <div class="target-group" data-target="lambda">
      <div class="field-row">
        <TextField
          name="lambda_function"
          label={TARGET_LABELS.lambda_function}
          value={v.lambda_function}
          error={e.lambda_function}
          mono
          placeholder="billing-close"
          hint="A name or ARN; invoked with the payload as the event."
        />
        <TextField
          name="lambda_qualifier"
          label={TARGET_LABELS.lambda_qualifier}
          value={v.lambda_qualifier}
          error={e.lambda_qualifier}
          mono
          placeholder="live"
          hint="A version or alias; optional."
        />
      </div>
    </div>
  </>
);
