/**
 * The inspector's page: one HTML file, one script, one style sheet, served from the
 * server's own origin (the page's Content-Security-Policy allows nothing inline). Plain DOM:
 * every text that comes from a run — tool names, ids, arguments, progress, results — is set
 * with `textContent` or `dataset`, never parsed as HTML; class names are chosen from fixed
 * lists, never taken from the data.
 *
 * Lanes are windowed: only the rows in view (and a few around) exist in the DOM, so a batch
 * of 10,000 calls scrolls like one of ten.
 *
 * The script is kept as text here (no build step for the page: the package serves it as it
 * is); spec/inspect/page.slow.spec.ts drives it in Chromium.
 *
 * @module
 */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolrun inspect</title>
<link rel="stylesheet" href="app.css">
<link rel="icon" href="favicon.ico">
<script src="app.js" defer></script>
</head>
<body>
<header id="head"><h1>toolrun inspect</h1><span id="title"></span><span id="mode" class="mode"></span><label id="pick" hidden>batch <select id="batch"></select></label></header>
<p id="error" hidden></p>
<section id="summary" aria-label="summary">
<dl id="facts"></dl>
<figure id="conc-box"><figcaption>calls running over time</figcaption><svg id="conc" viewBox="0 0 1000 60" preserveAspectRatio="none" role="img" aria-label="concurrency over time"></svg></figure>
</section>
<ul id="legend">
<li><i class="seg wait"></i>waiting for a slot</li>
<li><i class="seg run live"></i>running</li>
<li><i class="seg run o-ok"></i>ok</li>
<li><i class="seg run o-error"></i>error</li>
<li><i class="seg run o-rejected"></i>rejected</li>
<li><i class="seg run o-stopped"></i>not run / interrupted / abandoned</li>
<li><i class="seg run o-timed_out"></i>timed out</li>
<li><i class="seg run replayed"></i>replayed from the journal</li>
<li><i class="seg appr"></i>waiting for approval</li>
<li><i class="seg hol"></i>ended, held for earlier calls (head-of-line wait)</li>
<li><i class="tick-key"></i>progress</li>
</ul>
<div id="axis"><span class="lbl"></span><div id="ticks"></div></div>
<div id="lanes" tabindex="0"><div id="spacer"><div id="rows"></div></div></div>
<div id="tip" hidden></div>
</body>
</html>
`;

export const PAGE_STYLE = `
:root { --row: 22px; --label: 240px; font: 13px/1.35 system-ui, sans-serif; color: #1d2330; background: #fbfbfd; }
body { margin: 0; display: flex; flex-direction: column; height: 100vh; }
#head { display: flex; gap: 12px; align-items: baseline; padding: 8px 14px; background: #1d2330; color: #fff; }
#head h1 { font-size: 15px; margin: 0; }
#title { opacity: .8; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 50vw; }
.mode { padding: 1px 8px; border-radius: 9px; background: #56607a; font-size: 12px; }
.mode.live { background: #1f9d55; }
#error { margin: 8px 14px; padding: 8px; background: #fde8e8; color: #8a1111; border: 1px solid #e99; }
#summary { display: flex; gap: 18px; padding: 8px 14px; border-bottom: 1px solid #dde; align-items: center; }
#facts { display: grid; grid-template-columns: repeat(3, auto); gap: 2px 18px; margin: 0; }
#facts div { display: flex; gap: 6px; }
#facts dt { color: #667; } #facts dd { margin: 0; font-weight: 600; }
#conc-box { flex: 1; margin: 0; min-width: 200px; }
#conc-box figcaption { color: #667; font-size: 11px; }
#conc { width: 100%; height: 60px; background: #f0f2f7; border: 1px solid #dde; }
#conc path { fill: #9bb7e8; stroke: #3a66b7; stroke-width: 1; vector-effect: non-scaling-stroke; }
#legend { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; margin: 0; padding: 6px 14px; font-size: 12px; color: #445; }
#legend li { display: flex; align-items: center; gap: 5px; }
#legend .seg { position: static; display: inline-block; width: 22px; height: 10px; }
.tick-key { display: inline-block; width: 2px; height: 12px; background: #123; }
#axis { position: relative; height: 18px; margin-left: var(--label); border-bottom: 1px solid #ccd; font-size: 11px; color: #667; }
#axis .lbl { position: absolute; left: calc(-1 * var(--label) + 14px); }
#ticks span { position: absolute; transform: translateX(-50%); top: 2px; }
#lanes { flex: 1; overflow-y: auto; position: relative; }
#spacer { position: relative; }
.lane { position: absolute; left: 0; right: 0; height: var(--row); display: flex; border-bottom: 1px solid #eef; }
.lane.batch { background: #e9ecf4; font-weight: 600; }
.lane .label { width: var(--label); flex: none; box-sizing: border-box; padding: 2px 14px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, monospace; font-size: 12px; }
.lane .track { position: relative; flex: 1; margin-right: 14px; }
.seg { position: absolute; top: 5px; height: 12px; border-radius: 2px; min-width: 1px; }
.seg.wait { background: repeating-linear-gradient(90deg, #d5d9e3 0 3px, transparent 3px 6px); top: 10px; height: 2px; }
.seg.run.live { background: #4f7fd9; }
.seg.o-ok { background: #2e9e5b; }
.seg.o-error { background: #d64545; }
.seg.o-rejected { background: #e08a2c; }
.seg.o-stopped { background: #8d8fa0; }
.seg.o-timed_out { background: #b8860b; }
.seg.o-other { background: #555; }
.seg.replayed { background: repeating-linear-gradient(135deg, #7b61c9 0 4px, #b3a4e6 4px 8px); }
.seg.appr { background: repeating-linear-gradient(135deg, #f0c419 0 4px, #fff3c0 4px 8px); border: 1px solid #b8920a; box-sizing: border-box; }
.seg.hol { top: 3px; height: 16px; background: repeating-linear-gradient(135deg, #ff3d7f 0 3px, #ffd6e4 3px 6px); border: 1px solid #c2185b; box-sizing: border-box; }
.seg.rel { width: 2px; top: 2px; height: 18px; background: #1d2330; }
.tick { position: absolute; top: 4px; width: 2px; height: 14px; background: #102040; opacity: .75; }
#tip { position: fixed; z-index: 5; max-width: 480px; padding: 8px 10px; background: #1d2330; color: #f3f5fa; border-radius: 5px; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; pointer-events: none; box-shadow: 0 3px 12px #0005; }
`;

export const PAGE_SCRIPT = String.raw`'use strict';
(function () {
  var ROW = 22;
  var OUTCOMES = { ok: 'o-ok', error: 'o-error', rejected: 'o-rejected', not_run: 'o-stopped', interrupted: 'o-stopped', abandoned: 'o-stopped', timed_out: 'o-timed_out' };
  var state = { batches: new Map(), calls: new Map(), live: true, title: '', offset: 0, dropped: 0, chosen: undefined, connected: false };
  var $ = function (id) { return document.getElementById(id); };
  var lanesBox = $('lanes'), spacer = $('spacer'), rows = $('rows'), tip = $('tip');
  var order = new Map();
  var dirty = true, queued = false;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function ms(d) {
    if (!(d >= 0)) return '-';
    if (d < 1000) return Math.round(d) + ' ms';
    if (d < 60000) return (d / 1000).toFixed(d < 10000 ? 2 : 1) + ' s';
    return Math.floor(d / 60000) + ' min ' + Math.round((d % 60000) / 1000) + ' s';
  }
  function now() { return Date.now() + state.offset; }
  function fail(text) { var e = $('error'); e.textContent = text; e.hidden = false; }

  function apply(delta, snapshot) {
    if (snapshot) { state.batches.clear(); state.calls.clear(); }
    state.live = delta.live === true;
    state.title = String(delta.title);
    state.offset = Number(delta.now) - Date.now();
    state.dropped = Number(delta.droppedCalls) || 0;
    (delta.removed || []).forEach(function (b) {
      state.batches.delete(b);
      state.calls.forEach(function (c, k) { if (c.batch === b) state.calls.delete(k); });
    });
    delta.batches.forEach(function (b) { state.batches.set(b.batch, b); });
    delta.calls.forEach(function (c) { state.calls.set(c.batch + ':' + c.index, c); });
    order.clear();
    schedule();
  }
  function schedule() {
    dirty = true;
    if (queued) return;
    queued = true;
    requestAnimationFrame(function () { queued = false; if (dirty) render(); });
  }
  function callsOf(batch) {
    var list = order.get(batch);
    if (list) return list;
    list = [];
    state.calls.forEach(function (c) { if (c.batch === batch) list.push(c); });
    list.sort(function (a, b) { return a.index - b.index; });
    order.set(batch, list);
    return list;
  }
  function current() {
    if (state.chosen !== undefined && state.batches.has(state.chosen)) return state.batches.get(state.chosen);
    var last;
    state.batches.forEach(function (b) { last = b; });
    return last;
  }
  function span(batch, calls) {
    var t0 = batch.start, t1 = batch.end !== undefined ? batch.end : t0;
    for (var i = 0; i < calls.length; i++) {
      var c = calls[i];
      if (c.release > t1) t1 = c.release;
      if (c.end > t1) t1 = c.end;
      if (c.start > t1) t1 = c.start;
    }
    if (batch.end === undefined && state.live) t1 = Math.max(t1, now());
    return [t0, Math.max(t1, t0 + 1)];
  }

  function summarize(batch, calls, t0, t1) {
    var points = [], slowest, hol = 0, held = 0, outcomes = {};
    var end = batch.end === undefined ? t1 : batch.end;
    for (var i = 0; i < calls.length; i++) {
      var c = calls[i];
      if (c.start !== undefined) {
        var stop = c.end !== undefined ? c.end : (c.approval ? c.approval.t : end);
        points.push([c.start, 1], [stop, -1]);
        if (c.end !== undefined && (!slowest || c.end - c.start > slowest.end - slowest.start)) slowest = c;
      }
      if (c.release !== undefined && c.end !== undefined && c.release > c.end) { hol += c.release - c.end; held++; }
      var o = c.outcome || (c.approval ? 'waiting for approval' : c.start !== undefined ? 'running' : 'waiting');
      outcomes[o] = (outcomes[o] || 0) + 1;
    }
    points.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var buckets = 500, peak = new Array(buckets).fill(0), level = 0, max = 0, j = 0;
    for (var k = 0; k < buckets; k++) {
      var edge = t0 + ((k + 1) * (t1 - t0)) / buckets, top = level;
      while (j < points.length && points[j][0] <= edge) { level += points[j][1]; if (level > top) top = level; j++; }
      peak[k] = top;
      if (top > max) max = top;
    }
    return { peak: peak, max: max, slowest: slowest, hol: hol, held: held, outcomes: outcomes };
  }
  function fact(list, name, value, key) {
    var d = el('div'); d.dataset.fact = key;
    d.append(el('dt', '', name), el('dd', '', value));
    list.append(d);
  }
  function drawSummary(batch, calls, t0, t1) {
    var s = summarize(batch, calls, t0, t1), facts = $('facts');
    facts.replaceChildren();
    fact(facts, 'wall time', ms(t1 - t0) + (batch.end === undefined && state.live ? ' (running)' : ''), 'wall');
    fact(facts, 'calls', String(calls.length), 'calls');
    fact(facts, 'most at once', String(s.max), 'concurrency');
    fact(facts, 'slowest call', s.slowest ? '#' + s.slowest.index + ' ' + s.slowest.name + ' ' + ms(s.slowest.end - s.slowest.start) : '-', 'slowest');
    fact(facts, 'head-of-line wait', ms(s.hol) + ' over ' + s.held + ' call' + (s.held === 1 ? '' : 's'), 'hol');
    fact(facts, 'outcomes', Object.keys(s.outcomes).map(function (k) { return k + ' ' + s.outcomes[k]; }).join(', ') || '-', 'outcomes');
    if (batch.aborted) fact(facts, 'batch', 'aborted', 'aborted');
    if (batch.paused) fact(facts, 'batch', 'paused: ' + batch.paused + ' waiting for approval', 'paused');
    if (state.dropped) fact(facts, 'dropped', state.dropped + ' calls (over the inspector\'s bound)', 'dropped');
    var d = 'M0 60';
    var scale = s.max === 0 ? 0 : 56 / s.max;
    for (var k = 0; k < s.peak.length; k++) d += ' L' + (k * 2) + ' ' + (60 - s.peak[k] * scale) + ' L' + (k * 2 + 2) + ' ' + (60 - s.peak[k] * scale);
    d += ' L1000 60 Z';
    var path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    path.setAttribute('d', d);
    $('conc').replaceChildren(path);
    $('summary').dataset.calls = String(calls.length);
  }
  function drawAxis(t0, t1) {
    var box = $('ticks');
    box.replaceChildren();
    $('axis').querySelector('.lbl').textContent = 'time since the batch began';
    var step = niceStep((t1 - t0) / 8);
    for (var t = 0; t <= t1 - t0; t += step) {
      var s = el('span', '', ms(t));
      s.style.left = ((t / (t1 - t0)) * 100) + '%';
      box.append(s);
    }
  }
  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
    var n = raw / p;
    return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * p;
  }
  function pct(t, t0, t1) { return ((t - t0) / (t1 - t0)) * 100; }
  function seg(track, cls, from, to, t0, t1, part) {
    var s = el('div', 'seg ' + cls);
    s.style.left = pct(from, t0, t1) + '%';
    s.style.width = Math.max(0, pct(to, t0, t1) - pct(from, t0, t1)) + '%';
    if (part) s.dataset.part = part;
    track.append(s);
    return s;
  }
  function drawLane(c, top, batch, t0, t1) {
    var lane = el('div', 'lane');
    lane.style.top = top + 'px';
    lane.dataset.key = c.batch + ':' + c.index;
    lane.dataset.index = String(c.index);
    lane.dataset.outcome = c.outcome || '';
    var label = el('span', 'label', '#' + c.index + ' ' + c.name);
    var track = el('div', 'track');
    lane.append(label, track);
    var end = batch.end !== undefined ? batch.end : t1;
    var start = c.start !== undefined ? c.start : end;
    if (start > batch.start) seg(track, 'wait', batch.start, start, t0, t1, 'wait');
    if (c.start !== undefined) {
      var runEnd = c.end !== undefined ? c.end : c.approval ? c.approval.t : end;
      var cls = c.end === undefined ? 'run live' : c.replayed ? 'run replayed' : 'run ' + (OUTCOMES[c.outcome] || 'o-other');
      seg(track, cls, c.start, runEnd, t0, t1, 'run');
    }
    if (c.approval) seg(track, 'appr', c.approval.t, c.end !== undefined ? c.end : end, t0, t1, 'approval');
    if (c.end !== undefined && c.release !== undefined && c.release > c.end) seg(track, 'hol', c.end, c.release, t0, t1, 'hol');
    if (c.release !== undefined) seg(track, 'rel', c.release, c.release, t0, t1, 'release');
    var ticks = c.ticks.first.concat(c.ticks.last);
    for (var i = 0; i < ticks.length; i++) {
      var k = el('div', 'tick');
      k.style.left = pct(ticks[i][0], t0, t1) + '%';
      k.dataset.tick = String(i);
      track.append(k);
    }
    return lane;
  }
  function render() {
    dirty = false;
    var batch = current();
    $('title').textContent = state.title;
    var mode = $('mode');
    mode.textContent = state.live ? (state.connected ? 'live' : 'reconnecting') : 'recorded';
    mode.className = 'mode' + (state.live ? ' live' : '');
    drawPicker();
    if (!batch) { rows.replaceChildren(); $('facts').replaceChildren(); return; }
    var calls = callsOf(batch.batch), t = span(batch, calls), t0 = t[0], t1 = t[1];
    drawSummary(batch, calls, t0, t1);
    drawAxis(t0, t1);
    spacer.style.height = (calls.length * ROW) + 'px';
    var first = Math.max(0, Math.floor(lanesBox.scrollTop / ROW) - 10);
    var last = Math.min(calls.length, Math.ceil((lanesBox.scrollTop + lanesBox.clientHeight) / ROW) + 10);
    var out = [];
    for (var i = first; i < last; i++) out.push(drawLane(calls[i], i * ROW, batch, t0, t1));
    rows.replaceChildren.apply(rows, out);
    document.body.dataset.rendered = String(calls.length);
  }
  function drawPicker() {
    var select = $('batch');
    $('pick').hidden = state.batches.size < 2;
    if (select.options.length === state.batches.size) return;
    select.replaceChildren();
    state.batches.forEach(function (b) {
      var o = el('option', '', b.label);
      o.value = String(b.batch);
      select.append(o);
    });
    var b = current();
    if (b) select.value = String(b.batch);
  }
  $('batch').addEventListener('change', function (e) { state.chosen = Number(e.target.value); order.clear(); lanesBox.scrollTop = 0; schedule(); });
  lanesBox.addEventListener('scroll', schedule);
  window.addEventListener('resize', schedule);

  function describe(c, part, tickIndex) {
    var lines = ['#' + c.index + ' ' + c.name + '  (' + c.id + ')'];
    if (tickIndex !== undefined) {
      var ticks = c.ticks.first.concat(c.ticks.last), k = ticks[tickIndex];
      if (k) lines.push('progress at +' + ms(k[0] - (c.start || k[0])) + ': ' + k[1]);
      return lines.join('\n');
    }
    lines.push('arguments: ' + c.args);
    if (c.start !== undefined) lines.push('started: +' + ms(c.start - current().start));
    if (c.approval) lines.push('approval requested: ' + c.approval.reason);
    if (c.end !== undefined) lines.push('ended ' + (c.replayed ? '(replayed) ' : '') + c.outcome + ' after ' + ms(c.end - c.start));
    if (c.release !== undefined && c.end !== undefined) lines.push('released ' + ms(c.release - c.end) + ' after its end' + (c.release > c.end ? ' (held for earlier calls)' : ''));
    lines.push('progress: ' + c.ticks.count + ' tick' + (c.ticks.count === 1 ? '' : 's') + (c.ticks.count > c.ticks.first.length + c.ticks.last.length ? ' (first and last ' + c.ticks.first.length + ' kept)' : ''));
    if (c.result !== undefined) lines.push('result: ' + c.result);
    if (part === 'hol') lines.push('head-of-line wait: this call had ended; its result waited for an earlier call');
    return lines.join('\n');
  }
  rows.addEventListener('mousemove', function (e) {
    var target = e.target, lane = target.closest ? target.closest('.lane') : null;
    var c = lane ? state.calls.get(lane.dataset.key) : undefined;
    if (!c) { tip.hidden = true; return; }
    tip.textContent = describe(c, target.dataset.part, target.dataset.tick === undefined ? undefined : Number(target.dataset.tick));
    tip.hidden = false;
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 490) + 'px';
    tip.style.top = Math.min(e.clientY + 14, window.innerHeight - tip.offsetHeight - 8) + 'px';
  });
  rows.addEventListener('mouseleave', function () { tip.hidden = true; });

  setInterval(function () { var b = current(); if (state.live && b && b.end === undefined) schedule(); }, 250);

  var source = new EventSource('events');
  function handler(snapshot) {
    return function (message) {
      try { apply(JSON.parse(message.data), snapshot); }
      catch (error) { fail('the inspector sent something this page cannot read: ' + error.message); }
    };
  }
  source.addEventListener('snapshot', handler(true));
  source.addEventListener('delta', handler(false));
  source.addEventListener('open', function () { state.connected = true; schedule(); });
  source.addEventListener('error', function () { state.connected = false; if (!state.live) source.close(); schedule(); });
})();
`;
