// The flame graph (root on top): click a frame to zoom into it, the
// breadcrumb to zoom out, hover for its values, search to highlight and
// sum frames, right-click for the menu and the sandwich view (all callers
// of a function above it, all its callees below, merged over its call
// sites).  With --base or two dumps: widths from the newer profile, red
// where a path grew, blue where it shrank, vanished paths at their old
// width.  The server merged frames under 1/10,000 of the total.
'use strict';

(function () {
  const JH = window.JH;
  const ROW = 18;

  function buildTree(data) {
    const n = data.nodes.length, kids = Array.from({ length: n }, () => []);
    const nodes = data.nodes.map((a, i) => ({
      i, name: a[0] < 0 ? (i === 0 ? 'all' : '(frames under ' + JH.fmtValue(data.threshold, data.value) + ', merged)') : data.names[a[0]],
      parent: a[1], v: a[2], cv: a[3], b: a[4], cb: a[5], merged: a[6], kids: kids[i],
    }));
    for (const nd of nodes) if (nd.parent >= 0) kids[nd.parent].push(nd);
    layout(nodes[0]);
    return nodes;
  }

  // The width a node takes: its value, or its old value when it vanished,
  // and at least its children's.
  function layout(root) {
    const order = [], stack = [root];
    while (stack.length) { const nd = stack.pop(); order.push(nd); for (const k of nd.kids) stack.push(k); }
    for (let k = order.length - 1; k >= 0; k--) {
      const nd = order[k];
      let sum = 0;
      for (const c of nd.kids) sum += c.L;
      nd.L = Math.max(nd.v > 0 ? nd.v : (nd.v === 0 && nd.b > 0 ? nd.b : 0), sum);
    }
  }

  function hue(name) {
    let h = 0;
    for (let k = 0; k < name.length; k++) h = (h * 31 + name.charCodeAt(k)) >>> 0;
    return h;
  }

  function color(nd, diff, maxd) {
    if (nd.merged) return '#ddd';
    if (diff) {
      const d = nd.v - nd.b;
      if (!d) return '#f2f2f2';
      const t = Math.min(1, Math.abs(d) / (maxd || 1)), c = Math.round(235 - 150 * t);
      return d > 0 ? `rgb(255,${c},${c})` : `rgb(${c},${c},255)`;
    }
    const h = hue(nd.name);
    return `rgb(${205 + (h % 50)},${(h >> 8) % 180 + 50},${(h >> 16) % 55})`;
  }

  function tip(ev, nd, data, total) {
    const t = document.getElementById('tooltip');
    const lines = [nd.name,
      data.value + ': ' + JH.fmtValue(nd.v, data.value) + ' (' + JH.pct(nd.v, total) + ')',
      data.companion + ': ' + JH.fmtValue(nd.cv, data.companion)];
    if (data.diff) lines.push('before: ' + JH.fmtValue(nd.b, data.value) + ', change: ' + (nd.v - nd.b >= 0 ? '+' : '') + JH.fmtValue(nd.v - nd.b, data.value));
    t.textContent = lines.join('\n');
    t.hidden = false;
    t.style.left = Math.min(ev.clientX + 12, window.innerWidth - 360) + 'px';
    t.style.top = (ev.clientY + 14) + 'px';
  }

  // Draws the subtree of ROOT into BOX, FLIP draws it upwards (callers).
  function draw(box, root, data, opts) {
    const W = box.clientWidth || 1000, scale = root.L ? W / root.L : 0;
    const frames = [], total = opts.total;
    let maxDepth = 0;
    const stack = [[root, 0, 0]];
    while (stack.length && frames.length < 30000) {
      const [nd, x, depth] = stack.pop();
      const w = nd.L * scale;
      if (w < 0.5) continue;
      frames.push([nd, x, depth, w]);
      maxDepth = Math.max(maxDepth, depth);
      let cx = x;
      const ks = [];
      for (const c of nd.kids) { ks.push([c, cx, depth + 1]); cx += c.L * scale; }
      for (let k = ks.length - 1; k >= 0; k--) stack.push(ks[k]);
    }
    box.style.height = ((maxDepth + 1) * ROW + 2) + 'px';
    for (const [nd, x, depth, w] of frames) {
      const e = document.createElement('div');
      e.className = 'fr' + (nd.merged ? ' merged' : '');
      e.style.left = x + 'px';
      e.style.width = Math.max(w - 1, 1) + 'px';
      e.style.top = (opts.flip ? (maxDepth - depth) * ROW : depth * ROW) + 'px';
      e.style.background = color(nd, data.diff, opts.maxd);
      e.dataset.name = nd.name;
      e.dataset.node = nd.i;
      if (w > 30) e.textContent = nd.name;
      if (opts.re && !nd.merged && opts.re.test(nd.name)) e.classList.add('match');
      e.addEventListener('mousemove', (ev) => tip(ev, nd, data, total));
      e.addEventListener('mouseleave', () => { document.getElementById('tooltip').hidden = true; });
      if (opts.click) e.addEventListener('click', (ev) => { ev.stopPropagation(); opts.click(nd, ev); });
      e.addEventListener('contextmenu', (ev) => {
        ev.preventDefault();
        ev.stopPropagation();
        if (nd.merged || nd.i === 0 && !opts.flip && root === opts.root0) return;
        JH.menu(ev.clientX, ev.clientY, nd.name, JH.exact(nd.name), [
          ['Sandwich', () => JH.go(null, { sw: nd.name, z: null })],
          ['Zoom', () => JH.go(null, { z: nd.i, sw: null })],
        ]);
      });
      box.append(e);
    }
    return frames.length;
  }

  // The callers and the callees of NAME, each merged over every frame of
  // NAME that has no frame of NAME above it (recursion counted once).
  function sandwich(nodes, name) {
    const mk = (nm) => ({ name: nm, v: 0, cv: 0, b: 0, cb: 0, merged: 0, kids: [], map: new Map(), i: -1 });
    const add = (t, nd) => { t.v += nd.v; t.cv += nd.cv; t.b += nd.b; t.cb += nd.cb; };
    const child = (t, nm) => { let c = t.map.get(nm); if (!c) { c = mk(nm); t.map.set(nm, c); t.kids.push(c); } return c; };
    const callers = mk(name), callees = mk(name);
    const inside = new Array(nodes.length).fill(false);
    for (const nd of nodes) {
      const p = nd.parent >= 0 ? nodes[nd.parent] : null;
      inside[nd.i] = p ? (inside[p.i] || p.name === name) : false;
      if (nd.name !== name || inside[nd.i] || nd.merged) continue;
      add(callers, nd);
      let t = callers;
      for (let a = p; a && a.parent >= 0; a = nodes[a.parent]) { t = child(t, a.name); add(t, nd); }
      add(callees, nd);
      const stack = [[nd, callees]];
      while (stack.length) {
        const [src, dst] = stack.pop();
        for (const c of src.kids) { const d = child(dst, c.name); add(d, c); stack.push([c, d]); }
      }
    }
    for (const t of [callers, callees]) {
      const all = [t], st = [t];
      while (st.length) { const x = st.pop(); x.kids.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)); for (const k of x.kids) { all.push(k); st.push(k); } }
      layout(t);
    }
    return { callers, callees };
  }

  JH.views.flamegraph = async function (main, params, current) {
    const data = JSON.parse(await JH.fetchData('flame', { z: null, sw: null, q: null, sort: null }));
    if (!current()) return;
    const nodes = buildTree(data), root0 = nodes[0];
    const total = root0.v;
    let maxd = 0;
    if (data.diff) for (const nd of nodes) maxd = Math.max(maxd, Math.abs(nd.v - nd.b));
    const q = params.get('q') || '';
    let re = null;
    if (q) { try { re = new RegExp(q); } catch (e) { JH.showError('search: ' + e.message); } }
    const search = JH.el('input', { id: 'flame-search', type: 'search', value: q, placeholder: 'regex', size: 30 });
    search.addEventListener('change', () => JH.go(null, { q: search.value }));
    const tools = JH.el('div', { class: 'flame-tools' }, 'Search ', search);
    const matched = JH.el('span', { id: 'matched' });
    tools.append(matched);
    main.append(tools);
    const note = 'Total ' + JH.fmtValue(total, data.value) + (data.diff ? ' (before: ' + JH.fmtValue(data.total_before, data.value) + '; red grew, blue shrank; widths from the newer profile, vanished paths at their old width)' : '') +
      '. ' + (data.merged ? data.merged + ' groups of frames under 1/10,000 of the total (' + JH.fmtValue(data.threshold, data.value) + ') are merged on the server.' : 'No frame was merged.') +
      ' Click zooms, right-click opens the menu (focus, sandwich, ...).';
    const sw = params.get('sw');
    if (sw) {
      const s = sandwich(nodes, sw);
      const back = JH.el('button', { type: 'button', id: 'sandwich-close', text: 'Back to the flame graph', onclick: () => JH.go(null, { sw: null }) });
      const up = JH.el('div', { class: 'flame', id: 'callers' }), down = JH.el('div', { class: 'flame', id: 'callees' });
      main.append(JH.el('div', { class: 'sandwich', id: 'sandwich' },
        JH.el('div', {}, back, ' Sandwich of ', JH.el('b', { text: sw }), ': ' + JH.fmtValue(s.callees.v, data.value) + ' (' + JH.pct(s.callees.v, total) + ')'),
        JH.el('h3', { text: 'Callers (above it)' }), up, JH.el('h3', { text: 'Callees (below it)' }), down));
      draw(up, s.callers, data, { flip: true, total, maxd, re });
      draw(down, s.callees, data, { total, maxd, re });
      JH.status('');
      return;
    }
    let z = params.has('z') ? +params.get('z') : 0;
    if (!(z >= 0 && z < nodes.length)) z = 0;
    const zoom = nodes[z];
    const crumbs = JH.el('div', { class: 'breadcrumb', id: 'breadcrumb' });
    const chain = [];
    for (let a = zoom; a; a = a.parent >= 0 ? nodes[a.parent] : null) chain.unshift(a);
    chain.forEach((a, k) => {
      if (k) crumbs.append(' › ');
      crumbs.append(JH.el('button', { type: 'button', text: a.name, 'data-node': a.i, onclick: () => JH.go(null, { z: a.i ? a.i : null }) }));
    });
    const box = JH.el('div', { class: 'flame', id: 'flame' });
    main.append(crumbs, box, JH.el('p', { class: 'note', id: 'flame-note', text: note }));
    draw(box, zoom, data, { total, maxd, re, root0, click: (nd) => JH.go(null, { z: nd.i ? nd.i : null }) });
    if (re) {
      let sum = 0;
      const under = new Array(nodes.length).fill(false);
      for (const nd of nodes) {
        const p = nd.parent >= 0 ? under[nd.parent] : false;
        const m = !nd.merged && nd.i && re.test(nd.name);
        under[nd.i] = p || m;
        if (m && !p) sum += nd.v;
      }
      matched.textContent = 'Matched: ' + JH.pct(sum, total) + ' (' + JH.fmtValue(sum, data.value) + ')';
      matched.dataset.sum = sum;
    }
  };
})();
