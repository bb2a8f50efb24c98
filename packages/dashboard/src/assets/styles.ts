/**
 * @module dashboard/assets/styles — the dashboard's one stylesheet, served at /assets/dashboard.css. Kept as a string
 * module so a bundled Lambda carries it with no file copies. Light and dark themes follow the system setting.
 */
export const STYLES = String.raw`
:root {
  --bg: #f5f6f8; --surface: #ffffff; --fg: #1b2230; --muted: #586274; --border: #d5dae3; --accent: #1f4fbf;
  --accent-fg: #ffffff; --focus: #9a5b00; --danger: #b42318; --danger-fg: #ffffff; --ok: #1e8a45; --warn: #c27803; --bad: #c8322b;
  --grid: #e6e9ef; --shadow: 0 1px 2px rgb(16 24 40 / 6%);
  --st-queued: #dbe7ff; --st-queued-fg: #1c3f94; --st-running: #d5f2f7; --st-running-fg: #0a5c6b;
  --st-retrying: #fff1cf; --st-retrying-fg: #7a4d00; --st-succeeded: #daf3e2; --st-succeeded-fg: #17602f;
  --st-failed: #ffe6d5; --st-failed-fg: #8f3600; --st-dead: #fddcdc; --st-dead-fg: #9b1c1c;
  --st-muted: #e9ecf1; --st-muted-fg: #475060;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0e131c; --surface: #161d2a; --fg: #e5e9f0; --muted: #a1abbd; --border: #2c3648; --accent: #86a8ff;
    --accent-fg: #0e131c; --focus: #f5a300; --danger: #ff8a80; --danger-fg: #0e131c; --ok: #4cc27a; --warn: #f0b429; --bad: #ff6b61; --grid: #263043;
    --shadow: none;
    --st-queued: #1c2d52; --st-queued-fg: #b9cdff; --st-running: #0f3a42; --st-running-fg: #a5e9f5;
    --st-retrying: #44330c; --st-retrying-fg: #ffdd8c; --st-succeeded: #123a22; --st-succeeded-fg: #a8ecc0;
    --st-failed: #4a2410; --st-failed-fg: #ffc19c; --st-dead: #4d1616; --st-dead-fg: #ffb4b0;
    --st-muted: #262f3f; --st-muted-fg: #c4cbd8;
  }
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--fg); line-height: 1.5;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--accent); text-underline-offset: 2px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.92em; }
/* The ring sits 2 px outside the element, on the page behind it: --focus keeps 3:1 against every background. */
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 3px; }
main:focus { outline: none; }
time, .nowrap { white-space: nowrap; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.skip-link { position: absolute; left: 0.5rem; top: -3rem; z-index: 10; background: var(--surface); padding: 0.5rem 0.75rem; }
.skip-link:focus { top: 0.5rem; }
.muted { color: var(--muted); }

.top { background: var(--surface); border-bottom: 1px solid var(--border); }
.top-inner { max-width: 1200px; margin: 0 auto; padding: 0.5rem 1rem; display: flex; align-items: center; gap: 0.25rem 1.5rem; flex-wrap: wrap; }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; padding: 0.35rem 0; }
.top nav { flex: 1 1 auto; min-width: 0; }
.top nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem; margin: 0; padding: 0; }
.top nav a { display: block; padding: 0.4rem 0.7rem; border-radius: 6px; color: var(--fg); text-decoration: none; white-space: nowrap; }
.top nav a:hover { background: var(--bg); }
.top nav a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
.signout { margin-left: auto; display: flex; align-items: center; gap: 0.75rem; }
.banner { background: var(--st-retrying); color: var(--st-retrying-fg); padding: 0.6rem 1rem; text-align: center; border-bottom: 1px solid var(--border); }

main { max-width: 1200px; margin: 0 auto; padding: 1.25rem 1rem 2rem; }
.bottom { max-width: 1200px; margin: 0 auto; padding: 0 1rem 2rem; color: var(--muted); font-size: 0.85rem; }
h1 { font-size: 1.5rem; margin: 0; line-height: 1.25; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 1.75rem 0 0.6rem; }
h3 { font-size: 1rem; margin: 0 0 0.4rem; }
.page-header { display: flex; justify-content: space-between; align-items: flex-start; gap: 0.75rem 1rem; flex-wrap: wrap; margin-bottom: 1rem; }
.subtitle { margin: 0.25rem 0 0; color: var(--muted); }
.actions, .button-row { display: flex; gap: 0.5rem; flex-wrap: wrap; align-items: center; }

.flash { padding: 0.65rem 0.9rem; border-radius: 8px; margin-bottom: 1rem; border: 1px solid var(--border); }
.flash-ok { background: var(--st-succeeded); color: var(--st-succeeded-fg); }
.flash-error { background: var(--st-dead); color: var(--st-dead-fg); }
.flash a { color: inherit; font-weight: 600; }

.btn {
  display: inline-flex; align-items: center; justify-content: center; min-height: 2.5rem; padding: 0.4rem 0.95rem;
  border-radius: 7px; border: 1px solid var(--border); background: var(--surface); color: var(--fg);
  font: inherit; font-weight: 500; cursor: pointer; text-decoration: none; white-space: nowrap;
}
.btn:hover { border-color: var(--muted); }
.btn-primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
.btn-primary:hover { filter: brightness(1.08); border-color: var(--accent); }
.btn-danger { background: var(--danger); border-color: var(--danger); color: var(--danger-fg); }
.btn-danger-link { color: var(--danger); }
.btn-quiet { background: transparent; }
.btn-small { min-height: 2rem; padding: 0.2rem 0.6rem; font-size: 0.85rem; }
.btn[aria-current="page"] { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
.inline-form { display: inline; margin: 0; }

.panel { background: var(--surface); border: 1px solid var(--border); border-radius: 10px; padding: 1rem; box-shadow: var(--shadow); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(8rem, 1fr)); gap: 0.75rem; margin: 0; padding: 0; list-style: none; }
.card { background: var(--surface); border: 1px solid var(--border); border-radius: 10px; padding: 0.75rem 0.9rem; box-shadow: var(--shadow); }
.card a { color: inherit; text-decoration: none; display: block; }
.card a:hover .card-label { text-decoration: underline; }
.card-value { font-size: 1.6rem; font-weight: 650; line-height: 1.2; font-variant-numeric: tabular-nums; }
.card-label { color: var(--muted); font-size: 0.85rem; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); gap: 1rem; margin-top: 1.25rem; }

.badge { display: inline-block; padding: 0.05rem 0.55rem; border-radius: 999px; font-size: 0.82rem; font-weight: 600; background: var(--st-muted); color: var(--st-muted-fg); white-space: nowrap; }
.st-queued { background: var(--st-queued); color: var(--st-queued-fg); }
.st-running { background: var(--st-running); color: var(--st-running-fg); }
.st-retrying { background: var(--st-retrying); color: var(--st-retrying-fg); }
.st-succeeded, .st-active { background: var(--st-succeeded); color: var(--st-succeeded-fg); }
.st-failed { background: var(--st-failed); color: var(--st-failed-fg); }
.st-dead { background: var(--st-dead); color: var(--st-dead-fg); }

.table-wrap { background: var(--surface); border: 1px solid var(--border); border-radius: 10px; overflow-x: auto; box-shadow: var(--shadow); }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 0.55rem 0.75rem; border-bottom: 1px solid var(--grid); vertical-align: top; }
th { font-size: 0.82rem; color: var(--muted); font-weight: 600; white-space: nowrap; }
tbody tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.wrap-anywhere { overflow-wrap: anywhere; }
.clip-id { display: inline-block; max-width: 11ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: top; }
.excerpt { display: block; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; overflow-wrap: anywhere; max-width: 28rem; }
.pick { display: inline-flex; align-items: center; gap: 0.6rem; min-width: 2.75rem; min-height: 2.75rem; margin: -0.6rem -0.75rem; padding: 0 0.75rem; cursor: pointer; }
.pick input { width: 1.25rem; height: 1.25rem; margin: 0; flex: none; cursor: pointer; }
.pick-text { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.schedule { display: flex; flex-direction: column; }
.schedule-expr code { overflow-wrap: anywhere; }
.empty { padding: 1rem; background: var(--surface); border: 1px dashed var(--border); border-radius: 10px; color: var(--muted); }
.pager { margin-top: 0.75rem; }

dl.props { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: 0.35rem 1rem; margin: 0; }
dl.props dt { color: var(--muted); }
dl.props dd { margin: 0; overflow-wrap: anywhere; min-width: 0; }
dl.props dd > p { margin: 0; }
pre.block {
  margin: 0; padding: 0.75rem; background: var(--bg); border: 1px solid var(--border); border-radius: 8px;
  white-space: pre-wrap; overflow-wrap: anywhere; max-height: 28rem; overflow: auto;
}
ol.timeline { list-style: none; margin: 0; padding: 0; border-left: 2px solid var(--border); }
ol.timeline li { position: relative; padding: 0 0 0.75rem 1rem; }
ol.timeline li::before { content: ""; position: absolute; left: -7px; top: 0.45rem; width: 12px; height: 12px; border-radius: 50%; background: var(--surface); border: 2px solid var(--accent); }
ol.timeline li.pending::before { border-color: var(--border); }
ol.chain { margin: 0; padding-left: 1.25rem; }
ol.chain li { margin-bottom: 0.25rem; }
ol.chain li[aria-current] { font-weight: 600; }

form.stacked { display: grid; gap: 1rem; }
.field { display: grid; gap: 0.3rem; min-width: 0; align-content: start; }
.field label, .field .label { font-weight: 600; }
.hint { color: var(--muted); font-size: 0.85rem; margin: 0; }
.field-error { color: var(--danger); font-size: 0.88rem; margin: 0; font-weight: 500; }
input[type="text"], input[type="password"], input[type="number"], input[type="datetime-local"], input:not([type]), select, textarea {
  width: 100%; font: inherit; color: var(--fg); background: var(--surface); border: 1px solid var(--muted);
  border-radius: 7px; padding: 0.45rem 0.6rem; min-height: 2.5rem;
}
input[type="text"], input[type="password"], input[type="number"], input[type="datetime-local"], select { height: 2.5rem; }
textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; min-height: 5rem; resize: vertical; }
[aria-invalid="true"] { border-color: var(--danger); box-shadow: 0 0 0 1px var(--danger); }
.field-row { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 11rem), 1fr)); gap: 1rem; }
fieldset { border: 1px solid var(--border); border-radius: 10px; padding: 0.75rem 1rem 1rem; margin: 0; min-width: 0; }
legend { font-weight: 600; padding: 0 0.35rem; }
details.advanced > summary { cursor: pointer; font-weight: 600; padding: 0.25rem 0; }
details.advanced[open] > summary { margin-bottom: 0.75rem; }
.check { display: flex; gap: 0.5rem; align-items: center; font-weight: 500; min-height: 2.75rem; cursor: pointer; }
.check input { width: 1.15rem; height: 1.15rem; }
.error-summary { border: 2px solid var(--danger); border-radius: 10px; padding: 0.75rem 1rem; background: var(--surface); }
.error-summary h2 { margin: 0 0 0.35rem; color: var(--danger); }
.error-summary ul { margin: 0; padding-left: 1.2rem; }
.preview { min-height: 3rem; margin-top: 1rem; }
.preview:empty { min-height: 0; margin-top: 0; }
.preview ol { margin: 0.25rem 0 0; padding-left: 1.4rem; }
.filters { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-end; margin-bottom: 1rem; }
.filters .field { flex: 1 1 12rem; max-width: 18rem; }
.login { max-width: 24rem; margin: 3rem auto; }
.login .subtitle { margin-bottom: 1rem; }
.confirm { max-width: 40rem; }

.stale { margin: 0 0 0.75rem; padding: 0.5rem 0.75rem; background: var(--surface); border: 1px solid var(--border); border-left: 4px solid var(--warn); border-radius: 6px; }
.live-bar { display: flex; gap: 0.75rem; align-items: center; justify-content: flex-end; color: var(--muted); font-size: 0.82rem; margin-bottom: 0.35rem; }
.chart { margin: 0; }
.chart-top, .chart-axis { display: flex; justify-content: space-between; font-size: 0.8rem; }
.panel-title { margin-top: 0; }
.subhead { margin-top: 1rem; }
ol.compact { margin: 0; padding-left: 1.4rem; }
.stacked-fields { display: grid; gap: 1rem; }
.target-group { display: grid; gap: 1rem; }
form:has(select[name=target] option[value=command]:checked) .target-group:not([data-target=command]),
form:has(select[name=target] option[value=http]:checked) .target-group:not([data-target=http]),
form:has(select[name=target] option[value=lambda]:checked) .target-group:not([data-target=lambda]) { display: none; }
.status-line { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; margin-bottom: 1rem; }
.status-line .button-row { margin-left: auto; }
meter { width: 4rem; vertical-align: middle; }
.chart svg { display: block; width: 100%; height: 7.5rem; }
.chart figcaption { color: var(--muted); font-size: 0.85rem; margin-top: 0.35rem; }
.chart .axis { stroke: var(--grid); stroke-width: 1; }
.bar-ok { fill: var(--ok); } .bar-failed { fill: var(--warn); } .bar-dead { fill: var(--bad); } .bar-rate { fill: var(--bad); }
.legend { display: flex; gap: 0.9rem; flex-wrap: wrap; font-size: 0.82rem; color: var(--muted); margin: 0.25rem 0 0; padding: 0; list-style: none; }
.swatch { display: inline-block; width: 0.7rem; height: 0.7rem; border-radius: 2px; margin-right: 0.3rem; vertical-align: -0.05rem; }
.swatch.ok { background: var(--ok); } .swatch.failed { background: var(--warn); } .swatch.dead { background: var(--bad); }

@media (max-width: 720px) {
  body { font-size: 15px; }
  main { padding: 1rem 0.75rem 2rem; }
  .top-inner { padding: 0.4rem 0.75rem; }
  .top nav { order: 3; flex-basis: 100%; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack tr { border-bottom: 1px solid var(--border); padding: 0.5rem 0; }
  table.stack tbody tr:last-child { border-bottom: 0; }
  table.stack td { border: 0; padding: 0.2rem 0.75rem; display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 0.5rem; text-align: left; }
  table.stack td::before { content: attr(data-label); flex: 0 0 7rem; color: var(--muted); font-size: 0.85rem; }
  table.stack td > * { min-width: 0; max-width: calc(100% - 7.5rem); }
  table.stack td.num { text-align: left; }
  table.stack td.pick-cell::before { display: none; }
  table.stack td.pick-cell > .pick { max-width: none; width: 100%; margin: 0; padding: 0; }
  .pick-text { position: static; width: auto; height: auto; overflow: visible; clip: auto; white-space: normal; }
  .btn-small { min-height: 2.5rem; }
  .excerpt { max-width: none; }
  dl.props { grid-template-columns: 1fr; gap: 0.1rem; }
  dl.props dd { margin-bottom: 0.5rem; }
}
`;
