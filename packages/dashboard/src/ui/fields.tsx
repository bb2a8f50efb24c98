/**
 * @module dashboard/ui/fields — labelled form fields: every input has a label, its hint and error are linked with
 * aria-describedby, and an invalid one says so with aria-invalid.
 */
import type { FC, PropsWithChildren } from 'hono/jsx';

interface Common {
  name: string;
  label: string;
  hint?: string;
  error?: string;
}

const ids = (name: string) => ({ input: `f-${name}`, hint: `f-${name}-hint`, error: `f-${name}-error` });

function describedBy(name: string, hint?: string, error?: string): string | undefined {
  const i = ids(name);
  const parts = [hint ? i.hint : '', error ? i.error : ''].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : undefined;
}

const Notes: FC<{ name: string; hint?: string; error?: string }> = ({ name, hint, error }) => (
  <>
    {hint && (
      <p class="hint" id={ids(name).hint}>
        {hint}
      </p>
    )}
    {error && (
      <p class="field-error" id={ids(name).error}>
        {error}
      </p>
    )}
  </>
);

export const TextField: FC<
  Common & {
    value: string;
    type?: 'text' | 'password' | 'number' | 'datetime-local';
    /** For `datetime-local`: 1 lets seconds be set. */
    step?: number;
    required?: boolean;
    list?: string;
    inputmode?: 'numeric' | 'decimal' | 'text';
    autocomplete?: string;
    placeholder?: string;
    mono?: boolean;
  }
> = ({
  name,
  label,
  hint,
  error,
  value,
  type = 'text',
  step,
  required,
  list,
  inputmode,
  autocomplete,
  placeholder,
  mono,
}) => (
  <div class="field">
    <label for={ids(name).input}>{label}</label>
    <input
      id={ids(name).input}
      name={name}
      type={type}
      step={step}
      value={value}
      required={required}
      list={list}
      inputmode={inputmode}
      autocomplete={autocomplete ?? 'off'}
      placeholder={placeholder}
      spellcheck={false}
      class={mono ? 'mono' : undefined}
      aria-invalid={error ? 'true' : undefined}
      aria-describedby={describedBy(name, hint, error)}
    />
    <Notes name={name} hint={hint} error={error} />
  </div>
);

/** A textarea; the newline after the opening tag keeps a value that starts with one (parsers drop the first). */
export const TextArea: FC<Common & { value: string; rows?: number; required?: boolean }> = ({
  name,
  label,
  hint,
  error,
  value,
  rows = 3,
  required,
}) => (
  <div class="field">
    <label for={ids(name).input}>{label}</label>
    <textarea
      id={ids(name).input}
      name={name}
      rows={rows}
      required={required}
      spellcheck={false}
      aria-invalid={error ? 'true' : undefined}
      aria-describedby={describedBy(name, hint, error)}
    >
      {`\n${value}`}
    </textarea>
    <Notes name={name} hint={hint} error={error} />
  </div>
);

/** A labelled select around `children` (its options). */
const Select: FC<PropsWithChildren<Common>> = ({ name, label, hint, error, children }) => (
  <div class="field">
    <label for={ids(name).input}>{label}</label>
    <select
      id={ids(name).input}
      name={name}
      aria-invalid={error ? 'true' : undefined}
      aria-describedby={describedBy(name, hint, error)}
    >
      {children}
    </select>
    <Notes name={name} hint={hint} error={error} />
  </div>
);

export const SelectField: FC<Common & { value: string; options: [value: string, label: string][] }> = ({
  value,
  options,
  ...common
}) => (
  <Select {...common}>
    {options.map(([v, l]) => (
      <option value={v} selected={v === value}>
        {l}
      </option>
    ))}
  </Select>
);

/**
 * A select of `groups` of options (an `<optgroup>` each; a group without a label stands first, ungrouped). A value
 * that is not among the options is kept as a first option of its own, so a form re-rendered or opened for an edit
 * never changes it silently.
 */
export const GroupedSelectField: FC<Common & { value: string; groups: [label: string, values: string[]][] }> = ({
  value,
  groups,
  ...common
}) => {
  const known = groups.some(([, values]) => values.includes(value));
  const option = (v: string) => (
    <option value={v} selected={v === value}>
      {v}
    </option>
  );
  return (
    <Select {...common}>
      {!known && option(value)}
      {groups.map(([group, values]) =>
        group === '' ? values.map(option) : <optgroup label={group}>{values.map(option)}</optgroup>,
      )}
    </Select>
  );
};

export const CheckField: FC<Common & { checked: boolean; value?: string }> = ({
  name,
  label,
  hint,
  error,
  checked,
  value = 'on',
}) => (
  <div class="field">
    <label class="check" for={ids(name).input}>
      <input
        id={ids(name).input}
        type="checkbox"
        name={name}
        value={value}
        checked={checked}
        aria-describedby={describedBy(name, hint, error)}
      />
      {label}
    </label>
    <Notes name={name} hint={hint} error={error} />
  </div>
);

/** The id of a field's input, for links from an error summary. */
export const fieldId = (name: string) => ids(name).input;
