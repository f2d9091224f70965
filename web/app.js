// jheap web UI: the page's state lives in its URL (pprof's parameters);
// every view fetches its data from /data/VIEW with the same query.
// Everything from the profile is put into the page as text (textContent,
// createTextNode, SVG text nodes), never as markup.
'use strict';

const JH = {
  views: {},          // name -> function(container, params) rendering it
  info: null,
  SERVER_KEYS: ['f', 'i', 'h', 's', 'si', 'g', 'a', 't', 'tf', 'ti', 'd', 'b', 'sort', 'q', 'z', 'sw', 'cmp'],
  CONTROLS: ['si', 'g', 'f', 'i', 'h', 's', 'a', 't', 'tf', 'ti'],
};
window.JH = JH;

JH.el = function (tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === 'class') e.className = attrs[k];
    else if (k === 'text') e.textContent = attrs[k];
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), attrs[k]);
    else e.setAttribute(k, attrs[k]);
  }
  for (const c of kids) e.append(c);   // strings become text nodes
  return e;
};

JH.svg = function (tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  return e;
};

JH.viewName = function () {
  const p = location.pathname.replace(/^\/ui\/?/, '');
  return p === '' ? 'graph' : p;
};

JH.params = function () {
  return new URLSearchParams(location.search);
};

// The settings the server was started with (its command line's --focus,
// --inuse_objects, ...): the parameters of the first page.
JH.initial = function () {
  return new URLSearchParams((JH.info || {}).initial || '');
};

// The URL holds every setting: one it does not name is the default.  A
// setting of the command line that was cleared stays in it, empty, since
// the server sends a URL without parameters to the command line's.
JH.query = function (params, extra) {
  const q = new URLSearchParams();
  for (const [k, v] of params) if (v !== '' && JH.SERVER_KEYS.includes(k)) q.set(k, v);
  for (const k in extra || {}) {
    if (extra[k] === null || extra[k] === '') q.delete(k); else q.set(k, extra[k]);
  }
  for (const [k] of JH.initial()) if (!q.has(k)) q.set(k, '');
  const s = q.toString();
  return s ? '?' + s : '';
};

// Goes to VIEW (or this one) with the parameters changed by CHANGES
// (null removes one); the history keeps each state.
JH.go = function (view, changes, replace) {
  const params = JH.params();
  for (const k in changes || {}) {
    if (changes[k] === null || changes[k] === '') params.delete(k); else params.set(k, changes[k]);
  }
  const path = '/ui/' + ((view || JH.viewName()) === 'graph' ? '' : (view || JH.viewName()));
  const url = path + JH.query(params);
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  JH.render();
};

JH.fetchData = async function (name, extra) {
  const r = await fetch('/data/' + name + JH.query(JH.params(), extra));
  const text = await r.text();
  if (!r.ok) throw new Error(text || ('HTTP ' + r.status));
  return text;
};

JH.showError = function (msg) {
  const e = document.getElementById('error');
  e.hidden = !msg;
  e.textContent = msg || '';
};

JH.status = function (msg) {
  document.getElementById('status').textContent = msg || '';
};

JH.reEscape = function (s) {
  return s.replace(/[\\^$.*+?()[\]{}|\/-]/g, '\\$&');
};

JH.exact = function (name) {
  return '^' + JH.reEscape(name) + '$';
};

JH.fmtBytes = function (v) {
  const a = Math.abs(v);
  const units = [['GiB', 1 << 30], ['MiB', 1 << 20], ['KiB', 1 << 10]];
  for (const [u, n] of units) if (a >= n) return (v / n).toFixed(2) + ' ' + u;
  return Math.round(v) + ' B';
};

JH.fmtValue = function (v, name) {
  return /objects/.test(name) ? Math.round(v) + ' objects' : JH.fmtBytes(v);
};

JH.pct = function (v, total) {
  return total ? (100 * v / total).toFixed(2) + '%' : 'n/a';
};

// The row menu of Top, the graph's nodes and the flame graph's frames.
JH.menu = function (x, y, name, re, extra) {
  const m = document.getElementById('menu');
  m.replaceChildren();
  m.append(JH.el('div', { class: 'title', text: name, title: name }));
  const items = [
    ['Focus', () => JH.go(null, { f: re })],
    ['Ignore', () => JH.go(null, { i: re })],
    ['Hide', () => JH.go(null, { h: re })],
    ['Show', () => JH.go(null, { s: re })],
    ['Peek', () => JH.go('peek', { f: re })],
    ['Source', () => JH.go('source', { f: re })],
    ['Disassembly', () => JH.go('disasm', { f: re })],
  ].concat(extra || []);
  for (const [label, fn] of items) {
    m.append(JH.el('button', { type: 'button', 'data-action': label.toLowerCase(), text: label,
      onclick: (ev) => { ev.stopPropagation(); JH.hideMenu(); fn(); } }));
  }
  m.hidden = false;
  m.style.left = (x + window.scrollX) + 'px';
  m.style.top = (y + window.scrollY) + 'px';
};

JH.hideMenu = function () {
  document.getElementById('menu').hidden = true;
};

function shellQuote(s) {
  return /^[A-Za-z0-9_\/.,:=@%+-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}

// The jheap command that writes what this view shows: the view's format,
// the URL's settings (all of them: the URL holds the view), then the
// server's options that hold for every view and its inputs, as the
// server gives them (/data/info: args, inputs).
JH.commandLine = function () {
  const p = JH.params(), info = JH.info || {};
  const args = ['jheap'];
  const view = JH.viewName();
  const f = p.get('f') || '';
  const mode = { top: '--text', graph: '--svg', flamegraph: '--flamegraph',
    peek: '--peek=' + f, source: '--list=' + f, disasm: '--weblist=' + f, timeline: '--growth' }[view];
  if (mode) args.push(mode);
  if (view === 'top' && p.get('sort') === 'cum') args.push('--cum');
  const si = { churn_space: 'churn', churn_objects: 'churn_objects' }[p.get('si')] || p.get('si');
  if (si) args.push('--' + si);
  if (p.get('g')) args.push('--' + p.get('g'));
  const opts = { f: 'focus', i: 'ignore', h: 'exclude', s: 'retain', a: 'allocator', t: 'thread',
    tf: 'tagfocus', ti: 'tagignore' };
  for (const k in opts) {
    if (k === 'f' && ['peek', 'source', 'disasm'].includes(view)) continue;
    if (p.get(k)) args.push('--' + opts[k] + '=' + p.get(k));
  }
  args.push(...(info.args || []));
  const profiles = info.profiles || [];
  if (info.series) {
    // the dumps this view shows, in place of those the server was given
    for (const [, kv] of info.labels || []) args.push('--label=' + kv);
    if (info.binary) args.push(info.binary);
    if (view === 'timeline') {
      args.push(...profiles);
    } else {
      const d = p.has('d') ? +p.get('d') : profiles.length - 1;
      if (p.has('b')) args.push('--base=' + profiles[+p.get('b')]);
      args.push(profiles[d]);
    }
  } else {
    args.push(...(info.inputs || []));
  }
  return args.map(shellQuote).join(' ');
};

function syncControls() {
  const p = JH.params();
  const info = JH.info || {};
  for (const k of JH.CONTROLS) {
    const e = document.getElementById(k);
    if (!e) continue;
    const def = { si: 'inuse_space', g: 'functions' }[k] || '';
    e.value = p.get(k) || def;
  }
  // which dump of a series every view shows (the timeline's choice)
  const line = document.getElementById('dumpline'), profs = info.profiles || [];
  const dn = p.has('d') ? profs[+p.get('d')] : null, bn = p.has('b') ? profs[+p.get('b')] : null;
  line.hidden = !info.series || (!dn && !bn) || p.get('cmp') === '1';
  line.textContent = line.hidden ? '' : 'Dump ' + (dn || profs[profs.length - 1] || '') + (bn ? ', the change since ' + bn : '') + ' (chosen on the timeline)';
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.view === JH.viewName());
    const q = JH.query(p, { z: null, sw: null, q: null, cmp: null });
    a.href = (a.dataset.view === 'graph' ? '/ui/' : '/ui/' + a.dataset.view) + q;
  }
}

JH.render = async function () {
  JH.hideMenu();
  JH.showError('');
  JH.status('');
  syncControls();
  document.getElementById('cmdline').hidden = true;
  const view = JH.viewName();
  const main = document.getElementById('view');
  main.replaceChildren();
  const fn = JH.views[view];
  if (!fn) { JH.showError('no such view: ' + view); return; }
  const token = (JH.renderToken = (JH.renderToken || 0) + 1);
  document.body.dataset.state = 'loading';
  try {
    await fn(main, JH.params(), () => token === JH.renderToken);
  } catch (e) {
    if (token === JH.renderToken) JH.showError(String(e.message || e));
  }
  if (token === JH.renderToken) document.body.dataset.state = 'ready';
};

// ---- Top -------------------------------------------------------------
JH.views.top = async function (main, params, current) {
  const data = JSON.parse(await JH.fetchData('top'));
  if (!current()) return;
  const sort = params.get('sort') || 'flat';
  const q = params.get('q') || '';
  let rows = data.rows.slice();
  if (sort === 'name') rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let re = null;
  if (q) {
    try { re = new RegExp(q, 'i'); } catch (e) { JH.showError('search: ' + e.message); }
  }
  if (re) rows = rows.filter((r) => re.test(r[0]));
  JH.status('Total: ' + data.total_text + ' ' + data.unit + ' (' + data.value + ')' +
    (data.diff ? ', the change from the base' : '') +
    (data.more ? '; ' + data.more + ' more rows not shown (narrow with a focus)' : ''));
  const search = JH.el('input', { id: 'search', type: 'search', placeholder: 'search names (regex)', value: q, size: 40 });
  search.addEventListener('change', () => JH.go(null, { q: search.value }));
  main.append(JH.el('div', { class: 'search' }, 'Search ', search));
  const cols = [['flat', 'flat'], ['flat%', ''], ['sum%', ''], ['cum', 'cum'], ['cum%', ''], ['name', 'name']];
  const tr = JH.el('tr');
  for (const [label, key] of cols) {
    const th = JH.el('th', { text: label, class: (label === 'name' ? 'name ' : '') + (key === sort ? 'sorted' : '') });
    if (key) { th.dataset.sort = key; th.addEventListener('click', () => JH.go(null, { sort: key === 'flat' ? null : key })); }
    tr.append(th);
  }
  const tbody = JH.el('tbody');
  for (const r of rows) {
    const row = JH.el('tr', { class: r[1] < 0 ? 'neg' : (data.diff && r[1] > 0 ? 'pos' : '') },
      JH.el('td', { class: 'flat', text: r[3] }), JH.el('td', { text: r[4] }), JH.el('td', { text: r[5] }),
      JH.el('td', { text: r[6] }), JH.el('td', { text: r[7] }), JH.el('td', { class: 'name', text: r[0] }));
    row.dataset.name = r[0];
    row.addEventListener('click', (ev) => { ev.stopPropagation(); JH.menu(ev.clientX, ev.clientY, r[0], JH.exact(r[0])); });
    tbody.append(row);
  }
  main.append(JH.el('table', { class: 'top', id: 'top' }, JH.el('thead', {}, tr), tbody));
};

// ---- Peek, Source, Disassembly ----------------------------------------
function needRe(main, params, what) {
  if (params.get('f')) return true;
  main.append(JH.el('p', { class: 'note', text: 'Give a regular expression in Focus (f) for the functions whose ' + what + ' to show, or pick one from a menu.' }));
  return false;
}

JH.views.peek = async function (main, params, current) {
  if (!needRe(main, params, 'callers and callees')) return;
  const text = await JH.fetchData('peek');
  if (current()) main.append(JH.el('pre', { class: 'report', id: 'report', text }));
};

JH.views.source = async function (main, params, current) {
  if (!needRe(main, params, 'source')) return;
  const text = await JH.fetchData('source');
  if (current()) main.append(JH.el('pre', { class: 'report', id: 'report', text }));
};

JH.views.disasm = async function (main, params, current) {
  if (!needRe(main, params, 'machine code')) return;
  // the page --weblist writes, in a frame where nothing can run
  const frame = JH.el('iframe', { class: 'disasm', id: 'disasm', sandbox: '', src: '/data/disasm' + JH.query(params) });
  frame.addEventListener('load', () => { frame.dataset.loaded = '1'; });
  main.append(frame);   // an error shows in the frame as text
};

// ---- the page --------------------------------------------------------
async function start() {
  try {
    JH.info = JSON.parse(await (await fetch('/data/info')).text());
  } catch (e) {
    JH.info = {};
  }
  const info = JH.info;
  document.getElementById('program').textContent = info.binary || (info.profiles || []).join(' ');
  // the server's options that no control changes hold for every view
  const every = document.getElementById('every');
  every.hidden = !(info.args || []).length;
  every.textContent = every.hidden ? '' : 'Every view: ' + info.args.map(shellQuote).join(' ');
  document.getElementById('nav-timeline').hidden = !info.series;
  const tsel = document.getElementById('t');
  for (const [uid, name] of info.threads || []) tsel.append(JH.el('option', { value: String(uid), text: uid + (name ? ' ' + name : '') }));
  document.getElementById('thread-label').hidden = !(info.threads || []).length;
  document.getElementById('tags-label').hidden = !info.has_labels;
  // the values of allocation counts only where the dumps have them
  if (!info.has_alloc) for (const o of document.querySelectorAll('#si option[value^=alloc], #si option[value^=churn]')) o.remove();
  document.getElementById('controls').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const ch = {};
    for (const k of JH.CONTROLS) {
      const v = document.getElementById(k).value;
      const def = { si: 'inuse_space', g: 'functions' }[k];
      ch[k] = v === def ? null : v;
    }
    JH.go(null, Object.assign(ch, { z: null, sw: null }));
  });
  // Reset: the settings the server was started with (none without them)
  document.getElementById('reset').addEventListener('click', () => {
    const keep = JH.initial();
    for (const k of ['d', 'b', 'cmp']) if (JH.params().get(k)) keep.set(k, JH.params().get(k));
    history.pushState(null, '', location.pathname + JH.query(keep));
    JH.render();
  });
  document.getElementById('copycmd').addEventListener('click', async () => {
    const cmd = JH.commandLine();
    const box = document.getElementById('cmdline'), t = document.getElementById('cmdtext');
    t.value = cmd;
    box.hidden = false;
    t.select();
    try { await navigator.clipboard.writeText(cmd); JH.status('copied: ' + cmd); } catch (e) { JH.status('select and copy the command below'); }
  });
  for (const a of document.querySelectorAll('#nav a')) {
    a.addEventListener('click', (ev) => {
      if (ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
      ev.preventDefault();
      history.pushState(null, '', a.getAttribute('href'));
      JH.render();
    });
  }
  document.addEventListener('click', () => JH.hideMenu());
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') JH.hideMenu(); });
  window.addEventListener('popstate', () => JH.render());
  JH.render();
}

document.addEventListener('DOMContentLoaded', start);
