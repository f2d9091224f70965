// The call graph: graphviz's SVG (as --svg writes it), parsed as data,
// cut down to drawing elements, then panned and zoomed.  A click on a
// node opens the menu of Top.
'use strict';

(function () {
  const JH = window.JH;
  const ALLOWED = new Set(['svg', 'g', 'path', 'polygon', 'polyline', 'ellipse', 'circle', 'rect',
    'text', 'title', 'line', 'tspan']);
  const ATTRS = new Set(['x', 'y', 'cx', 'cy', 'rx', 'ry', 'r', 'width', 'height', 'points', 'd', 'fill',
    'stroke', 'stroke-width', 'stroke-dasharray', 'font-family', 'font-size', 'font-weight',
    'text-anchor', 'transform', 'viewBox', 'class', 'id', 'x1', 'x2', 'y1', 'y2', 'opacity',
    'fill-opacity', 'stroke-opacity', 'font-style']);

  // A copy of the parsed SVG with only drawing elements and attributes:
  // no script, no link, no foreign object, no event handler, no style.
  function clean(node) {
    const name = node.localName;
    if (!ALLOWED.has(name)) return null;
    const out = JH.svg(name);
    for (const a of node.attributes) {
      if (ATTRS.has(a.name) && !/^\s*(javascript|data):/i.test(a.value)) out.setAttribute(a.name, a.value);
    }
    for (const c of node.childNodes) {
      if (c.nodeType === 3) out.append(document.createTextNode(c.data));
      else if (c.nodeType === 1) { const k = clean(c); if (k) out.append(k); }
    }
    return out;
  }

  // The name a node stands for: its text lines but the values, which
  // dot.c split at "::" and white space; a regex that joins them again.
  function nodeName(g) {
    const lines = [...g.querySelectorAll('text')].map((t) => t.textContent);
    const names = lines.filter((l) => !/^(of )?-?[0-9.]+ \((-?[0-9.]+%|n\/a)\)$/.test(l));
    return {
      name: names.join(' '),
      re: '^' + names.map(JH.reEscape).join('(::|\\s+)') + '$',
      value: lines.find((l) => /^-?[0-9.]+ \(/.test(l)) || '',
    };
  }

  JH.views.graph = async function (main, params, current) {
    const text = await JH.fetchData('graph');
    // a diff: each node red or blue by the sign of its row in Top
    const rows = (JH.info || {}).diff ? JSON.parse(await JH.fetchData('top')).rows : [];
    if (!current()) return;
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const root = doc.documentElement;
    if (root.localName !== 'svg') throw new Error('graphviz gave no SVG');
    const svg = clean(root);
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    const vb = (root.getAttribute('viewBox') || '0 0 800 600').split(/\s+/).map(Number);
    svg.setAttribute('width', vb[2]);
    svg.setAttribute('height', vb[3]);
    svg.id = 'graph';
    const wrap = JH.el('div', { class: 'graph-wrap', id: 'graph-wrap' });
    wrap.append(svg);
    main.append(JH.el('p', { class: 'note', text: 'Drag to pan, wheel to zoom, click a node for its menu.' +
      ((JH.info || {}).diff ? ' Red nodes grew, blue ones shrank.' : '') }), wrap);
    let scale = Math.min(1, (wrap.clientWidth || 1000) / vb[2]), tx = 0, ty = 0;
    const apply = () => { svg.style.transform = `translate(${tx}px,${ty}px) scale(${scale})`; };
    apply();
    wrap.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = wrap.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
      const k = ev.deltaY < 0 ? 1.2 : 1 / 1.2;
      tx = mx - (mx - tx) * k; ty = my - (my - ty) * k; scale *= k;
      apply();
    }, { passive: false });
    let drag = null, moved = false;
    wrap.addEventListener('mousedown', (ev) => { drag = [ev.clientX - tx, ev.clientY - ty]; moved = false; });
    window.addEventListener('mousemove', (ev) => {
      if (!drag) return;
      if (Math.abs(ev.clientX - drag[0] - tx) + Math.abs(ev.clientY - drag[1] - ty) > 3) moved = true;
      tx = ev.clientX - drag[0]; ty = ev.clientY - drag[1]; apply();
    });
    window.addEventListener('mouseup', () => { drag = null; });
    for (const g of svg.querySelectorAll('g.node')) {
      const n = nodeName(g);
      if (!n.name || /^Legend$/.test(g.querySelector('title')?.textContent || '')) continue;
      g.dataset.name = n.name;
      const shape = g.querySelector('polygon, ellipse, path');
      const re = new RegExp(n.re), row = rows.find((r) => re.test(r[0]));
      if (row && shape) {
        const v = row[1] || row[2];
        shape.setAttribute('fill', v < 0 ? '#a8c8f0' : v > 0 ? '#f4b0a8' : '#ffffff');
      }
      g.addEventListener('click', (ev) => {
        if (moved) return;
        ev.stopPropagation();
        JH.menu(ev.clientX, ev.clientY, n.name, n.re);
      });
    }
  };
})();
