// The timeline of a series of dumps: in-use bytes per dump over time
// (allocated bytes too when the dumps have them).  A click on a point
// opens that dump in every view (d); Shift-click (or Ctrl-click, or a
// click in Compare mode) picks a first point, the base (b), and a click on
// a second point opens the difference of the two.  The choice is in the
// URL (d, b, and cmp=1 while a second point is awaited), so reload and
// Back keep it.  Beside the chart, the --growth ranking.  Live (--pid):
// new dumps appear as the program writes them, and "Dump now" asks it
// for one (jheap dump PID).
'use strict';

(function () {
  const JH = window.JH;

  function chart(box, data, marks, onpick) {
    const W = 720, H = 320, L = 70, R = 20, T = 20, B = 40;
    const dumps = data.dumps;
    const svg = JH.svg('svg', { width: W, height: H, class: 'chart', id: 'chart' });
    const keys = ['inuse_space'].concat(data.has_alloc ? ['alloc_space'] : []);
    let ymax = 1;
    for (const d of dumps) for (const k of keys) ymax = Math.max(ymax, d[k]);
    const t0 = dumps.length ? dumps[0].time : 0, t1 = dumps.length ? dumps[dumps.length - 1].time : 1;
    // by time, unless two points would nearly touch: then one step a dump
    let byTime = t1 > t0;
    const place = (d, k) => L + (W - L - R) * (byTime ? (d.time - t0) / (t1 - t0) : (dumps.length > 1 ? k / (dumps.length - 1) : 0.5));
    let xs = dumps.map(place);
    if (byTime && xs.some((x, k) => k && x - xs[k - 1] < 14)) { byTime = false; xs = dumps.map(place); }
    const y = (v) => T + (H - T - B) * (1 - v / ymax);
    svg.append(JH.svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#888' }));
    svg.append(JH.svg('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#888' }));
    const lab = (x, yy, s, anchor) => { const t = JH.svg('text', { x, y: yy, 'font-size': 11, 'text-anchor': anchor || 'start' }); t.textContent = s; svg.append(t); };
    lab(L - 4, y(ymax) + 4, JH.fmtBytes(ymax), 'end');
    lab(L - 4, y(0) + 4, '0', 'end');
    lab(L, H - B + 16, byTime ? new Date(t0 * 1000).toLocaleTimeString() : 'dump 0');
    lab(W - R, H - B + 16, byTime ? '+' + (t1 - t0).toFixed(1) + ' s' : 'dump ' + (dumps.length - 1), 'end');
    const colors = { inuse_space: '#1a5fb4', alloc_space: '#c77c00' };
    for (const k of keys) {
      const pts = dumps.map((d, i) => xs[i] + ',' + y(d[k])).join(' ');
      svg.append(JH.svg('polyline', { points: pts, fill: 'none', stroke: colors[k], 'stroke-width': 2 }));
    }
    dumps.forEach((d, i) => {
      for (const k of keys) {
        const cls = i === marks.base ? 'base' : i === marks.open ? 'open' : '';
        const c = JH.svg('circle', { cx: xs[i], cy: y(d[k]), r: 6, fill: colors[k], class: cls, 'data-dump': i, 'data-key': k });
        const title = JH.svg('title');
        title.textContent = d.name + '\n' + k + ': ' + JH.fmtBytes(d[k]) + '\ninuse_objects: ' + d.inuse_objects;
        c.append(title);
        c.addEventListener('click', (ev) => { ev.stopPropagation(); onpick(i, ev); });
        svg.append(c);
      }
    });
    box.append(svg);
  }

  JH.views.timeline = async function (main, params, current) {
    const data = JSON.parse(await JH.fetchData('timeline', { d: null, b: null, cmp: null }));
    if (!current()) return;
    if (!data.series) { main.append(JH.el('p', { text: 'The timeline needs a series of dumps of one program (several dumps, a dump folder, or --pid).' })); return; }
    const n = data.dumps.length;
    const num = (k) => (params.has(k) && /^[0-9]+$/.test(params.get(k)) && +params.get(k) < n ? +params.get(k) : null);
    // what the views show: dump d (the last when none), against b
    const compare = params.get('cmp') === '1';
    const marks = { open: num('d') !== null ? num('d') : n - 1, base: num('b') };
    const name = (i) => data.dumps[i].name;
    const pick = (i, ev) => {
      if (compare && marks.base !== null && i !== marks.base) {
        // the second point: the older is the base, the newer is shown
        const [a, b] = marks.base < i ? [marks.base, i] : [i, marks.base];
        JH.go('top', { d: b, b: a, cmp: null });
      } else if (compare || ev.shiftKey || ev.ctrlKey || ev.metaKey) {
        JH.go(null, { b: i, d: null, cmp: '1' });   // the first of two
      } else {
        JH.go('top', { d: i, b: null, cmp: null });
      }
    };
    const left = JH.el('div', {}), side = JH.el('div', { class: 'side' });
    chart(left, data, marks, pick);
    left.append(JH.el('div', { class: 'legend' }, JH.el('span', { class: 'in', text: '● in use' }),
      data.has_alloc ? JH.el('span', { class: 'al', text: '● allocated' }) : '',
      JH.el('span', { class: 'open-mark', text: '◯ shown in every view' }),
      JH.el('span', { class: 'base-mark', text: '◯ base of the difference' })));
    const cmpBtn = JH.el('button', { type: 'button', id: 'compare', 'aria-pressed': compare ? 'true' : 'false',
      text: compare ? 'Cancel the comparison' : 'Compare two dumps',
      onclick: () => JH.go(null, compare ? { cmp: null, b: null } : { cmp: '1', b: null, d: null }) });
    let how;
    if (compare && marks.base !== null)
      how = ['Base: ', JH.el('b', { text: name(marks.base) }), '. Click a second point to open the difference of the two in every view.'];
    else if (compare)
      how = ['Compare: click the first point (the base), then the second.'];
    else
      how = ['Click a point to open that dump in every view; Shift-click (or Ctrl-click, or ', JH.el('i', { text: 'Compare two dumps' }), ') a first point and click a second to open their difference.'];
    const shown = marks.base !== null && !compare
      ? ['Shown in every view: ', JH.el('b', { text: name(marks.open) }), ' against ', JH.el('b', { text: name(marks.base) }), '.']
      : !compare ? ['Shown in every view: ', JH.el('b', { text: name(marks.open) }), num('d') === null ? ' (the last dump).' : '.'] : [];
    left.append(JH.el('p', { id: 'timeline-info' }, ...how, ' ', cmpBtn), JH.el('p', { id: 'timeline-shown' }, ...shown));
    const wrap = JH.el('div', { class: 'timeline', id: 'timeline' }, left, side);
    main.append(wrap);
    JH.status(data.dumps.length + ' dumps' + (data.live ? ', live: process ' + data.pid : ''));
    if (data.live) {
      const btn = JH.el('button', { type: 'button', id: 'dump-now', text: 'Dump now' });
      btn.addEventListener('click', async () => {
        btn.disabled = true;
        const r = await fetch('/api/dump', { method: 'POST', headers: { 'X-Jheap': '1' } });
        if (!r.ok) JH.showError(await r.text());
        btn.disabled = false;
      });
      side.append(JH.el('p', {}, btn, ' asks process ' + data.pid + ' for a dump (jheap dump ' + data.pid + ').'));
      const version = data.version;
      const tick = async () => {
        if (!current()) return;
        try {
          const t = JSON.parse(await JH.fetchData('timeline', { d: null, b: null }));
          if (t.version !== version && current()) { JH.render(); return; }
        } catch (e) { /* the server is gone: keep what is shown */ }
        setTimeout(tick, 1000);
      };
      setTimeout(tick, 1000);
    }
    if (data.dumps.length >= 2) {
      const text = await JH.fetchData('growth', { d: null, b: null, si: null });
      if (current()) side.append(JH.el('h3', { text: 'What keeps growing (--growth)' }), JH.el('pre', { class: 'report', id: 'growth', text }));
    }
  };
})();
