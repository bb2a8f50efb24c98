/**
 * @module dashboard/assets/script — the dashboard's progressive enhancement, served at /assets/dashboard.js. Every
 * page works without it; with it, live regions refresh in place, the job form previews its schedule while typing,
 * and the dead-letter page gets a "select all" box. Plain browser JavaScript, no build step.
 */
export const SCRIPT = String.raw`
'use strict';
(function () {
  var FRAGMENT = { 'X-Dashboard-Fragment': '1' };
  function toLogin() {
    location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search));
  }

  // Live regions: re-fetch this page's region every data-live ms, swap it in when it changed. Skipped while the tab is
  // hidden or focus is inside the region (a swap would take it away); stopped when the region marks itself final.
  function live(region) {
    if (region.querySelector('[data-live-final]')) return; // settled when rendered: nothing to refresh
    var every = Math.max(1000, Number(region.getAttribute('data-live')) || 3000);
    var paused = false, busy = false, timer = null, last = region.innerHTML;
    var bar = document.createElement('div');
    bar.className = 'live-bar';
    var status = document.createElement('span');
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-quiet btn-small';
    button.setAttribute('aria-pressed', 'false');
    button.textContent = 'Pause updates';
    bar.appendChild(status);
    bar.appendChild(button);
    region.parentNode.insertBefore(bar, region);
    function isFinal() { return region.querySelector('[data-live-final]') !== null; }
    function say(text) { status.textContent = text; }
    function schedule() { clearTimeout(timer); timer = setTimeout(tick, every); }
    function tick() {
      if (paused || busy) return;
      var focused = document.activeElement;
      if (document.hidden || (focused && focused !== region && region.contains(focused))) return schedule();
      busy = true;
      fetch(location.pathname + location.search, { headers: FRAGMENT, credentials: 'same-origin', cache: 'no-store' })
        .then(function (res) {
          if (res.status === 401) { toLogin(); throw new Error('signed out'); }
          if (!res.ok) throw new Error('HTTP ' + res.status);
          return res.text();
        })
        .then(function (html) {
          if (html !== last) { region.innerHTML = html; last = html; }
          say('Updated ' + new Date().toLocaleTimeString());
        })
        .catch(function () { say('Update failed; retrying'); })
        .then(function () {
          busy = false;
          if (isFinal()) { say('Final state: no more updates'); button.hidden = true; } else if (!paused) schedule();
        });
    }
    button.addEventListener('click', function () {
      paused = !paused;
      button.setAttribute('aria-pressed', String(paused));
      button.textContent = paused ? 'Resume updates' : 'Pause updates';
      say(paused ? 'Updates paused' : 'Live');
      if (paused) clearTimeout(timer); else tick();
    });
    document.addEventListener('visibilitychange', function () { if (!document.hidden && !paused && !isFinal()) tick(); });
    say('Live: updates every ' + every / 1000 + ' s');
    schedule();
  }
  Array.prototype.forEach.call(document.querySelectorAll('[data-live]'), live);

  // Live output of a running attempt: follow its event stream and append what it prints; once it ends, the live
  // region above shows the whole output, so the panel goes. Without JavaScript the panel shows the output as of
  // the page's rendering.
  Array.prototype.forEach.call(document.querySelectorAll('[data-output-stream]'), function (panel) {
    if (typeof EventSource !== 'function') return;
    var text = panel.querySelector('[data-output-text]');
    var note = panel.querySelector('[data-output-status]');
    var source = new EventSource(panel.getAttribute('data-output-stream'));
    var first = true;
    note.textContent = 'Following: new output appears as it is printed';
    source.addEventListener('output', function (event) {
      // The stream starts with everything written so far: it replaces what the page was rendered with.
      if (first) { text.textContent = ''; first = false; }
      var atEnd = text.scrollHeight - text.scrollTop - text.clientHeight < 40;
      text.textContent += event.data;
      if (atEnd) text.scrollTop = text.scrollHeight; // follow the end unless the reader scrolled up
    });
    source.addEventListener('end', function (event) {
      source.close();
      var status = '';
      try { status = JSON.parse(event.data).status; } catch (e) { /* no status: say it ended */ }
      note.textContent = 'The attempt ended' + (status ? ' (' + status + ')' : '') + ': its whole output is under Output above.';
    });
    // On Lambda each response ends with a resume event (and a retry hint): the reconnect that follows is planned.
    var planned = false;
    source.addEventListener('resume', function () { planned = true; });
    source.addEventListener('open', function () {
      planned = false;
      note.textContent = 'Following: new output appears as it is printed';
    });
    source.addEventListener('error', function () {
      // EventSource reconnects by itself (resuming after the last event); say so meanwhile, unless it was planned.
      if (source.readyState !== EventSource.CLOSED && !planned) note.textContent = 'Connection lost; reconnecting';
    });
  });

  // Schedule preview on the job form: ask the server (the scheduler's own cron code) as the user types.
  var form = document.querySelector('form[data-preview]');
  if (form) {
    var out = document.getElementById('schedule-preview');
    var cron = form.elements.namedItem('cron_expr');
    var zone = form.elements.namedItem('timezone');
    var wait = null, inflight = null;
    var update = function () {
      clearTimeout(wait);
      wait = setTimeout(function () {
        if (inflight) inflight.abort();
        inflight = new AbortController();
        var query = new URLSearchParams({ cron_expr: cron.value, timezone: zone.value });
        fetch(form.getAttribute('data-preview') + '?' + query, { headers: FRAGMENT, credentials: 'same-origin', signal: inflight.signal })
          .then(function (res) {
            if (res.status === 401) { toLogin(); throw new Error('signed out'); }
            return res.ok ? res.text() : null;
          })
          .then(function (html) { if (html !== null) out.innerHTML = html; })
          .catch(function () { /* aborted by a newer keystroke, or offline: the server checks on submit anyway */ });
      }, 300);
    };
    cron.addEventListener('input', update);
    zone.addEventListener('input', update);
    zone.addEventListener('change', update);
  }

  // Where focus belongs after an action or a refused form (the flash, the row acted on, the list of problems) is
  // marked autofocus, which browsers honour without JS; this covers one that does not do it for every element.
  var auto = document.querySelector('[autofocus]');
  if (auto && (document.activeElement === null || document.activeElement === document.body)) auto.focus();

  // "Select all" boxes (hidden without JS, where they could not work).
  Array.prototype.forEach.call(document.querySelectorAll('[data-select-all]'), function (box) {
    var scope = document.getElementById(box.getAttribute('data-select-all'));
    var wrapper = box.closest('[hidden]');
    if (wrapper) wrapper.hidden = false;
    box.addEventListener('change', function () {
      Array.prototype.forEach.call(scope.querySelectorAll('input[type=checkbox][name=ids]'), function (b) { b.checked = box.checked; });
    });
  });
})();
`;
