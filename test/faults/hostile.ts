/**
 * Hostile input for the API fuzzer: fast-check arbitraries for malformed, oversized, deeply nested, wrong-typed and
 * injection-laden requests, and the curated strings that must survive a round trip byte for byte.
 */
import fc from 'fast-check';

/** Strings that have broken systems before: injections, markup, quoting, unicode edge cases. */
export const HOSTILE_STRINGS: string[] = [
  `'; DROP TABLE jobs; --`,
  `"; DROP TABLE executions; --`,
  `' OR '1'='1`,
  `1; SELECT pg_sleep(10); --`,
  `$$; DROP TABLE jobs; $$`,
  `E'\\x27'`,
  `<script>alert(1)</script>`,
  `<img src=x onerror=alert(1)>`,
  `{{7*7}} \${7*7} <%= 7*7 %>`,
  `"quoted" 'single' \`back\``,
  `back\\slash \\\\ \\u0041 \\n`,
  `emoji 😀👩‍👩‍👧‍👦🏳️‍🌈🇫🇷`,
  `RTL \u202Eevil\u202C and \u200F mark \u200E`,
  `zero\u200Bwidth\u200Djoiner\uFEFFbom`,
  `combining e\u0301 a\u030A Z\u0351\u0352\u0353`,
  `CJK 漢字 かな 한국어 עברית العربية`,
  `astral 𝕳𝖊𝖑𝖑𝖔 𐍈 𝄞`,
  `%00 %27 %22 %3Cscript%3E`,
  `../../etc/passwd`,
  `C:\\Windows\\System32`,
  `null`,
  `undefined`,
  `NaN`,
  `__proto__`,
  `constructor`,
  `a`.repeat(190),
  `ünïcödé ñ ß ø æ`,
];

/** Control characters are fine in commands and payloads (never in names); NUL is refused everywhere. */
export const HOSTILE_WITH_CONTROLS: string[] = [
  `tab\there`,
  `new\nline`,
  `cr\rlf\r\n`,
  `bell\u0007 esc\u001b[31mred`,
  `del\u007f`,
];

/** Strings with unpaired UTF-16 surrogates: not Unicode, so not storable as text. Refuse them or keep them exactly. */
export const LONE_SURROGATES: string[] = ['a\uD800b', '\uDC00', 'x\uDBFF', 'pair\uD83D\uDE00then lone \uDE00'];

const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(...HOSTILE_STRINGS, ...HOSTILE_WITH_CONTROLS),
);

/** Unicode text that is a valid job name (no control characters, 1..200 chars after trimming). */
export const nameText = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
    fc.constantFrom(...HOSTILE_STRINGS),
  )
  .map((s) => [...s].filter((ch) => !/\p{Cc}/u.test(ch)).join(''))
  .filter((s) => s.trim().length > 0 && s.trim().length <= 180);

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => `x${String.fromCharCode(c)}y`);

/** Any value at all, including wrong types for every field. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  fc.jsonValue({ maxDepth: 3 }),
  anyText,
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    0,
    -1,
    1.5,
    1e308,
    -1e308,
    2 ** 53 + 1,
    Number.MAX_SAFE_INTEGER,
    '1',
    '0',
    'true',
    '',
    ' ',
    true,
    false,
    null,
    [],
    {},
  ),
);

const cronToken = fc.oneof(
  fc.constantFrom(
    '*',
    '?',
    'L',
    'W',
    '#',
    'H',
    'LW',
    '5L',
    '1#2',
    'JAN',
    'mon',
    'Sun',
    'FOO',
    '-',
    '/',
    ',',
    '*/0',
    '*/-1',
    '0-0',
    '59-0',
    '٣',
    '１',
    '99999999999999999999',
    '-5',
    '1e3',
    '0x1',
  ),
  fc.integer({ min: -5, max: 100 }).map(String),
  fc.tuple(fc.integer({ min: 0, max: 70 }), fc.integer({ min: 0, max: 70 })).map(([a, b]) => `${a}-${b}`),
  fc.tuple(fc.constantFrom('*', '0', '5-50'), fc.integer({ min: 0, max: 100 })).map(([a, b]) => `${a}/${b}`),
  fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 2, maxLength: 5 }).map((xs) => xs.join(',')),
);

/** Cron-like expressions: valid and nearly valid ones, wrong field counts, odd whitespace, unknown macros. */
export const cronExpr = fc.oneof(
  fc
    .tuple(
      fc.array(cronToken, { minLength: 1, maxLength: 8 }),
      fc.constantFrom(' ', '  ', '\t', '\u00a0', '\u3000', ' \n '),
    )
    .map(([tokens, sep]) => tokens.join(sep)),
  fc.constantFrom(
    '@yearly',
    '@annually',
    '@monthly',
    '@weekly',
    '@daily',
    '@midnight',
    '@hourly',
    '@reboot',
    '@every 5s',
    '@',
    '@@daily',
    '0 0 30 2 *',
    '0 0 31 4 *',
    '* * * * * * *',
    '',
    ' ',
    '* * * * *',
    '*/1 * * * * *',
    '0 0 29 2 1',
  ),
  anyText,
);

export const timezone = fc.oneof(
  fc.constantFrom(...Intl.supportedValuesOf('timeZone').slice(0, 400)),
  fc.constantFrom(
    'UTC',
    'utc',
    'Etc/GMT+14',
    'Etc/GMT-14',
    'Europe/Paris ',
    ' UTC',
    'America/New_York',
    'Mars/Olympus',
    '../../etc/passwd',
    'UTC\u0000',
    'GMT+5',
    '+05:00',
    'Z',
    '',
  ),
  anyText,
);

const isoish = fc.oneof(
  fc
    .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '0000-01-01T00:00:00.000Z',
    '-000001-01-01T00:00:00Z',
    '+275760-09-13T00:00:00Z',
    '9999-12-31T23:59:59.999Z',
    '2024-02-30T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:00:60Z',
    '2024-01-01',
    '2024-01-01T00:00:00',
    '2024-01-01T00:00:00+14:00',
    '2024-01-01T00:00:00-12:00',
    '2024-01-01T00:00:00+99:99',
    'yesterday',
    '1e12',
    '',
  ),
  anyText,
);

/** A JSON value nested `depth` levels deep (arrays or objects), built as text so building it is cheap. */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? '['.repeat(depth) + '1' + ']'.repeat(depth)
    : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** The job fields the random bodies set. */
type JobField =
  | 'name'
  | 'cron_expr'
  | 'timezone'
  | 'run_at'
  | 'command'
  | 'handler'
  | 'payload'
  | 'max_retries'
  | 'timeout_seconds'
  | 'backoff'
  | 'lane'
  | 'priority'
  | 'overlap'
  | 'misfire'
  | 'catch_up_max'
  | 'misfire_deadline_seconds'
  | 'status';

/** Plausible values per field (mostly valid), so random bodies reach the deeper checks, not just the type ones. */
const plausible: Record<JobField, fc.Arbitrary<unknown>> = {
  name: fc.oneof(nameText, anyValue, fc.constantFrom('a'.repeat(201), '   ', '\u0000', 'tab\tname')),
  cron_expr: fc.oneof(cronExpr, fc.constant(null)),
  timezone,
  run_at: fc.oneof(isoish, fc.constant(null)),
  command: fc.oneof(anyText, fc.constantFrom('x'.repeat(10_001), '', 'echo\u0000x'), anyValue),
  handler: fc.oneof(
    fc.constantFrom('noop', 'sleep', 'nap', 'no-such-handler', 'a'.repeat(101), 'bad name', 'x;y'),
    anyText,
  ),
  payload: fc.oneof(fc.jsonValue({ maxDepth: 4 }), anyValue, fc.constant({ s: 'x'.repeat(70_000) })),
  max_retries: fc.oneof(fc.integer({ min: -2, max: 102 }), anyValue),
  timeout_seconds: fc.oneof(fc.integer({ min: -1, max: 100_000 }), fc.constantFrom(0.5, 86_401, 601), anyValue),
  backoff: fc.oneof(
    fc.record(
      {
        base_seconds: fc.oneof(fc.double({ min: -1, max: 90_000, noNaN: true }), anyValue),
        factor: fc.oneof(fc.double({ min: 0, max: 11, noNaN: true }), anyValue),
        max_seconds: fc.oneof(fc.double({ min: -1, max: 90_000, noNaN: true }), anyValue),
        jitter: fc.constantFrom('full', 'none', 'some', 1),
      },
      { requiredKeys: [] },
    ),
    anyValue,
  ),
  lane: fc.oneof(fc.constantFrom('short', 'long', 'medium', 'SHORT'), anyValue),
  priority: fc.oneof(fc.integer({ min: -101, max: 101 }), anyValue),
  overlap: fc.oneof(fc.constantFrom('allow', 'forbid', 'replace', 'deny'), anyValue),
  misfire: fc.oneof(fc.constantFrom('skip', 'run_once', 'catch_up', 'never'), anyValue),
  catch_up_max: fc.oneof(fc.integer({ min: -1, max: 1001 }), anyValue),
  misfire_deadline_seconds: fc.oneof(fc.integer({ min: -1, max: 40_000_000 }), fc.constant(null), anyValue),
  status: fc.oneof(fc.constantFrom('active', 'paused', 'deleted'), anyValue),
};

/** A job-create body: a random subset of fields, mostly plausible values, sometimes unknown and hostile keys. */
export const jobBody: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.record(plausible, { requiredKeys: [] }),
    fc.option(
      fc.dictionary(
        fc.oneof(anyText, fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'next_run_at', 'deleted_at')),
        anyValue,
        { maxKeys: 2 },
      ),
      { freq: 4 },
    ),
    fc.option(loneSurrogate, { freq: 10 }),
    fc.constantFrom('name', 'command', 'payload'),
  )
  .map(([fields, extra, lone, where]) => {
    const body: Record<string, unknown> = { ...fields };
    if (extra)
      for (const [k, v] of Object.entries(extra))
        Object.defineProperty(body, k, { value: v, enumerable: true, configurable: true, writable: true });
    if (lone) body[where] = where === 'payload' ? { s: lone } : lone;
    return body;
  });

export const triggerBody: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ payload: fc.oneof(fc.jsonValue({ maxDepth: 4 }), anyValue) }, { requiredKeys: [] }),
  fc.record({ payload: anyValue, extra: anyValue }),
  anyValue,
);

/** Path ids: numeric-looking and not, never one that could name a real row (below 10^12). */
export const idText = fc
  .oneof(
    fc.constantFrom(
      '0',
      '-1',
      '1.0',
      '1e3',
      '0x10',
      '00001',
      ' 1',
      '1 ',
      '١٢٣',
      '１',
      '9223372036854775807',
      '9223372036854775808',
      '999999999999999999',
      '99999999999999999999',
      'null',
      'undefined',
      '%00',
      '%2e%2e',
      '..',
      '.',
      "1'",
      '1;DROP TABLE jobs',
      'a'.repeat(3000),
    ),
    fc.bigInt({ min: 10n ** 12n, max: 10n ** 19n }).map(String),
    fc.string({ unit: 'binary-ascii', maxLength: 30 }),
  )
  // URL parsing strips leading and trailing C0 controls and spaces, so `6\x16` is sent as `6`: keep such ids away
  // from the numbers of real rows too.
  .map((id) =>
    /^[1-9][0-9]{0,11}$/.test(id.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '')) ? `${id.trim()}000000000000` : id,
  );

/** Ids that URL parsing turns into a different path (dot segments): the route they reach may well exist. */
export function changesRoute(id: string): boolean {
  return /^(\.|%2e){1,2}$/i.test(id.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, ''));
}

export const queryValue = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '1',
    '200',
    '201',
    '-1',
    '1.5',
    '1e3',
    'abc',
    'null',
    '9'.repeat(30),
    'queued',
    'QUEUED',
    'succeeded',
    'active',
    'paused',
    '%00',
    '[]',
    '{}',
  ),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

export { isoish };
