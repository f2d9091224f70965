// The web UI driven in chromium as a person would use it (tests/t0900).
//   node ui_test.js SCENARIO BASE_URL OUTDIR [TAG]
// Each scenario prints what it checked and writes files into OUTDIR that
// the shell script compares with the command line's output; it fails
// (exit 1) with a message on the first thing that is not as it should be,
// and on any Content-Security-Policy violation, script error or console
// error.  SHOTS=DIR takes a screenshot of each view into DIR (the README's).
'use strict';
const fs = require('fs');
const path = require('path');
const { launch } = require('./cdp');

const [scenario, base, outdir, tag] = process.argv.slice(2);
const shots = process.env.SHOTS || '';
const out = (name, text) => fs.writeFileSync(path.join(outdir, name), text);
function check(cond, msg) { if (!cond) throw new Error(msg); console.log('ok: ' + msg); }

async function shot(page, name) {
  if (shots) await page.screenshot(path.join(shots, 'web-' + name));
}

// The Top table as --text prints it (without the Total line).
async function topText(page) {
  return page.eval(`[...document.querySelectorAll('#top tbody tr')].map((tr) => {
    const t = [...tr.children].map((td) => td.textContent);
    const pad = (s, n) => s.padStart(n);
    return pad(t[0], 8) + ' ' + pad(t[1], 6) + ' ' + pad(t[2], 6) + ' ' + pad(t[3], 8) + ' ' + pad(t[4], 6) + ' ' + t[5];
  }).join('\\n') + '\\n'`);
}

async function clean(page, what) {
  const bad = page.violations.concat(page.errors, page.console.filter((c) => /error/i.test(c) && !/Failed to load resource/.test(c)));
  if (bad.length) throw new Error(what + ': ' + bad.join('\n'));
}

const scenarios = {
  // Top: sort, search, a row's menu, focus; back and reload keep the state.
  async top(page) {
    await page.goto(base + '/ui/top');
    out('top.txt', await topText(page));
    const values = await page.eval("[...document.querySelectorAll('#si option')].map((o) => o.value).join(',')");
    check(values === 'inuse_space,inuse_objects', 'a profile without allocation counts offers only the in-use values: ' + values);
    await shot(page, 'top.png');
    await page.click('#top th[data-sort=cum]');
    await page.waitFor("location.search.includes('sort=cum') && document.body.dataset.state === 'ready'", 'sorted by cum');
    out('top-cum.txt', await topText(page));
    await page.click("#top tbody tr[data-name='cache_store_value']");
    await page.waitFor("!document.getElementById('menu').hidden", 'the row menu');
    const items = await page.eval("[...document.querySelectorAll('#menu button')].map((b) => b.textContent).join(',')");
    check(items === 'Focus,Ignore,Hide,Show,Peek,Source,Disassembly', 'the row menu offers ' + items);
    await page.click('#menu button[data-action=focus]');
    await page.waitFor("new URLSearchParams(location.search).get('f') === '^cache_store_value$' && document.body.dataset.state === 'ready'", 'the focus in the URL');
    out('top-focus.txt', await topText(page));
    check(await page.eval("document.getElementById('f').value") === '^cache_store_value$', 'the focus shows in its field');
    await page.type('#search', 'cache_[gi]');
    await page.waitFor("location.search.includes('q=') && document.body.dataset.state === 'ready'", 'the search in the URL');
    const names = await page.eval("[...document.querySelectorAll('#top tbody tr')].map((t) => t.dataset.name).join(',')");
    check(names === 'cache_get,cache_insert', 'the search keeps the matching rows: ' + names);
    await page.eval('location.reload()');
    await page.waitFor("document.readyState === 'complete' && document.body && document.body.dataset.state === 'ready' && document.querySelectorAll('#top tbody tr').length === 2", 'the same rows after a reload');
    await page.back();
    await page.waitFor("!location.search.includes('q=') && document.body.dataset.state === 'ready'", 'back: no search');
    await page.back();
    await page.waitFor("!location.search.includes('f=') && location.search.includes('sort=cum') && document.body.dataset.state === 'ready'", 'back: no focus');
    await page.click('#copycmd');
    const cmd = await page.waitFor("!document.getElementById('cmdline').hidden && document.getElementById('cmdtext').value", 'the command line');
    out('cmd.txt', cmd + '\n');
    await clean(page, 'top');
  },

  // A server started with view settings (--focus, --inuse_objects, ...):
  // a page without parameters opens with them in its URL and controls;
  // the copied command line writes what Top shows; a setting cleared
  // stays cleared through a reload, Back brings it back, Reset restores
  // them all.  Files TAG-*.txt; the shell runs the commands.
  async cmdline(page) {
    const ready = "document.body.dataset.state === 'ready'";
    const copy = async () => {
      await page.click('#copycmd');
      const c = await page.waitFor("!document.getElementById('cmdline').hidden && document.getElementById('cmdtext').value", 'the command line');
      await page.click('#copycmd');   // the same again: nothing else changes it
      return c;
    };
    await page.goto(base + '/ui/top');
    await page.waitFor(ready + " && document.querySelectorAll('#top tbody tr').length > 0", 'Top');
    const initial = await page.eval('location.search');
    out(tag + '-url.txt', initial + '\n');
    const p = new URLSearchParams(initial);
    for (const k of ['f', 'i', 'h', 's', 'a', 't', 'tf', 'ti']) {
      if (!p.get(k)) continue;
      check(await page.eval(`document.getElementById('${k}').value`) === p.get(k), `the control ${k} shows the server's ${p.get(k)}`);
    }
    if (p.get('si')) check(await page.eval("document.getElementById('si').value") === p.get('si'), 'the value menu shows ' + p.get('si'));
    if (p.get('g')) check(await page.eval("document.getElementById('g').value") === p.get('g'), 'the granularity menu shows ' + p.get('g'));
    const top = await topText(page);
    out(tag + '-top.txt', top);
    out(tag + '-cmd.txt', await copy() + '\n');
    out(tag + '-every.txt', await page.eval("(e => !e || e.hidden ? '' : e.textContent)(document.getElementById('every'))") + '\n');
    // the settings go with the page to every view
    await page.click('#nav a[data-view=flamegraph]');
    await page.waitFor("location.pathname === '/ui/flamegraph' && " + ready, 'the flame graph');
    for (const [k, v] of p) check(await page.eval(`new URLSearchParams(location.search).get('${k}')`) === v, `the flame graph keeps ${k}=${v}`);
    await page.click('#nav a[data-view=top]');
    await page.waitFor("location.pathname === '/ui/top' && " + ready, 'Top again');
    if (!p.get('f')) {
      await clean(page, 'cmdline');
      return;
    }
    // the focus cleared: the URL says so, a reload keeps it
    await page.clear('#f');
    check(await page.eval("document.getElementById('f').value") === '', 'the Focus field emptied');
    await page.click('#apply');
    await page.waitFor("new URLSearchParams(location.search).get('f') === '' && " + ready, 'the focus cleared in the URL');
    const nofocus = await topText(page);
    check(nofocus !== top, 'Top changes without the focus');
    out(tag + '-top-nofocus.txt', nofocus);
    out(tag + '-cmd-nofocus.txt', await copy() + '\n');
    await page.eval('window.__before_reload = 1; location.reload()');
    await page.waitFor("!window.__before_reload && document.readyState === 'complete' && document.body && " + ready, 'reloaded');
    check(await page.eval("new URLSearchParams(location.search).get('f')") === '' && await topText(page) === nofocus, 'a reload keeps the focus cleared');
    check(await page.eval("document.getElementById('f').value") === '', 'the Focus field stays empty');
    await page.back();
    await page.waitFor(`location.search === ${JSON.stringify(initial)} && ` + ready, 'Back: the server\'s settings');
    check(await topText(page) === top, 'Back shows the first Top again');
    // another change, then Reset: the server's settings again
    await page.choose('#g', 'files');
    await page.clear('#f');
    await page.click('#apply');
    await page.waitFor("new URLSearchParams(location.search).get('g') === 'files' && " + ready, 'files and no focus');
    await page.click('#reset');
    await page.waitFor(`location.search === ${JSON.stringify(initial)} && ` + ready, 'Reset: the server\'s settings');
    check(await topText(page) === top, 'Reset shows the first Top again');
    await clean(page, 'cmdline');
  },

  // The graph: a node's menu focuses it.
  async graph(page) {
    await page.goto(base + '/ui/');
    const n = await page.waitFor("document.querySelectorAll('#graph g.node').length", 'graph nodes');
    check(n > 5, n + ' nodes in the graph');
    await shot(page, 'graph.png');
    await page.click("#graph g.node[data-name='handle_request'] text");
    await page.waitFor("!document.getElementById('menu').hidden", 'the node menu');
    await page.click('#menu button[data-action=focus]');
    await page.waitFor("location.search.includes('f=') && document.body.dataset.state === 'ready' && document.querySelectorAll('#graph g.node').length > 0", 'the focused graph');
    const names = await page.eval("[...document.querySelectorAll('#graph g.node')].map((g) => g.dataset.name).filter(Boolean).sort().join(',')");
    check(!names.includes('pool_init') && names.includes('cache_store_value'), 'the focused graph keeps handle_request\'s paths: ' + names);
    out('graph-focus-param.txt', await page.eval("new URLSearchParams(location.search).get('f')") + '\n');
    await clean(page, 'graph');
  },

  // The flame graph: search, zoom with the breadcrumb, hover, sandwich.
  async flame(page) {
    await page.goto(base + '/ui/flamegraph');
    await page.waitFor("document.querySelectorAll('#flame .fr').length > 5", 'frames');
    await shot(page, 'flamegraph.png');
    await page.type('#flame-search', '^cache_');
    await page.waitFor("document.getElementById('matched') && document.getElementById('matched').textContent.startsWith('Matched')", 'the matched share');
    out('flame-matched.txt', await page.eval("document.getElementById('matched').dataset.sum") + '\n');
    const hl = await page.eval("[...document.querySelectorAll('#flame .fr.match')].map((e) => e.dataset.name).sort().join(',')");
    check(/cache_get/.test(hl) && !/main/.test(hl), 'the search highlights ' + hl);
    await page.hover("#flame .fr[data-name='cache_insert']");
    const tip = await page.waitFor("!document.getElementById('tooltip').hidden && document.getElementById('tooltip').textContent", 'the tooltip');
    out('flame-tip.txt', tip + '\n');
    await page.click("#flame .fr[data-name='handle_request']");
    await page.waitFor("location.search.includes('z=') && document.body.dataset.state === 'ready'", 'the zoom');
    const crumbs = await page.eval("[...document.querySelectorAll('#breadcrumb button')].map((b) => b.textContent).join('>')");
    check(crumbs === 'all>_start>__libc_start_main_impl>__libc_start_call_main>main>server_run>handle_request', 'the breadcrumb: ' + crumbs);
    const width = await page.eval("document.querySelector(\"#flame .fr[data-name='handle_request']\").getBoundingClientRect().width");
    const full = await page.eval("document.getElementById('flame').clientWidth");
    check(Math.abs(width - full) < 3, 'the zoomed frame takes the whole width');
    check(await page.eval("!document.querySelector(\"#flame .fr[data-name='pool_init']\")"), 'pool_init is outside the zoom');
    await page.click('#breadcrumb button[data-node="0"]');
    await page.waitFor("!location.search.includes('z=') && document.body.dataset.state === 'ready'", 'zoomed out');
    await page.click("#flame .fr[data-name='cache_get']", 'right');
    await page.waitFor("!document.getElementById('menu').hidden", 'the frame menu');
    await page.click('#menu button[data-action=sandwich]');
    await page.waitFor("document.getElementById('sandwich') && document.body.dataset.state === 'ready'", 'the sandwich view');
    const callers = await page.eval("[...document.querySelectorAll('#callers .fr')].map((e) => e.dataset.name).join(',')");
    const callees = await page.eval("[...document.querySelectorAll('#callees .fr')].map((e) => e.dataset.name).join(',')");
    check(callers.includes('handle_request') && callers.includes('main') && !callers.includes('cache_insert'), 'callers above: ' + callers);
    check(callees.includes('cache_insert') && callees.includes('cache_store_value') && !callees.includes('main'), 'callees below: ' + callees);
    await shot(page, 'sandwich.png');
    await clean(page, 'flame');
  },

  // A thread picked in the menu: the flame graph is of its share, and
  // reload keeps it.
  async thread(page) {
    await page.goto(base + '/ui/flamegraph');
    await page.waitFor("document.querySelectorAll('#flame .fr').length > 3", 'frames');
    check(await page.eval("!document.getElementById('thread-label').hidden"), 'the thread menu is offered');
    await page.choose('#t', '2');
    check(await page.eval("document.getElementById('t').value") === '2', 'thread 2 chosen in the menu');
    await page.click('#apply');
    await page.waitFor("new URLSearchParams(location.search).get('t') === '2' && document.body.dataset.state === 'ready'", 'the thread in the URL');
    await page.type('#flame-search', '^worker$');
    await page.waitFor("document.getElementById('matched') && document.getElementById('matched').textContent.startsWith('Matched')", 'the matched share');
    out('thread-matched.txt', await page.eval("document.getElementById('matched').dataset.sum") + '\n');
    await page.eval('window.__before_reload = 1; location.reload()');
    await page.waitFor("!window.__before_reload && document.readyState === 'complete' && document.body && document.body.dataset.state === 'ready' && document.getElementById('matched')", 'reloaded');
    check(await page.eval("document.getElementById('t').value") === '2', 'the thread kept by a reload');
    out('thread-matched-reload.txt', await page.eval("document.getElementById('matched').dataset.sum") + '\n');
    await clean(page, 'thread');
  },

  // A label filter typed in Tag focus: the flame graph of the samples
  // it keeps, and the command line that says so.
  async tags(page) {
    await page.goto(base + '/ui/flamegraph');
    await page.waitFor("document.querySelectorAll('#flame .fr').length > 3", 'frames');
    check(await page.eval("!document.getElementById('tags-label').hidden"), 'the tag filters are offered');
    await page.type('#tf', 'run=pa');
    await page.waitFor("new URLSearchParams(location.search).get('tf') === 'run=pa' && document.body.dataset.state === 'ready'", 'the tag focus in the URL');
    await page.type('#flame-search', '^phase1$');
    await page.waitFor("document.getElementById('matched') && document.getElementById('matched').textContent.startsWith('Matched')", 'the matched share');
    out('tags-matched.txt', await page.eval("document.getElementById('matched').dataset.sum") + '\n');
    await page.click('#copycmd');
    out('tags-cmd.txt', await page.waitFor("!document.getElementById('cmdline').hidden && document.getElementById('cmdtext').value", 'the command line') + '\n');
    await clean(page, 'tags');
  },

  // --base: signed Top rows, a coloured graph, a differential flame graph.
  async diff(page) {
    await page.goto(base + '/ui/top');
    out('diff-top.txt', await topText(page));
    await page.goto(base + '/ui/flamegraph');
    await page.waitFor("document.querySelectorAll('#flame .fr').length > 3", 'frames');
    const colors = await page.eval("[...document.querySelectorAll('#flame .fr')].map((e) => e.dataset.name + '=' + getComputedStyle(e).backgroundColor).join('\\n')");
    out('diff-colors.txt', colors + '\n');
    await shot(page, 'flamegraph-diff.png');
    await page.goto(base + '/ui/');
    await page.waitFor("document.querySelectorAll('#graph g.node').length", 'graph nodes');
    const fills = await page.eval("[...document.querySelectorAll('#graph g.node')].filter((g) => g.dataset.name).map((g) => g.dataset.name + '=' + (g.querySelector('polygon,ellipse,path') || {getAttribute: () => ''}).getAttribute('fill')).join('\\n')");
    out('diff-graph.txt', fills + '\n');
    await clean(page, 'diff');
  },

  // A series: a click opens a dump in every view; Shift-click and a click
  // (or Compare and two clicks) open the difference of two; the choice is
  // in the URL, so reload and Back keep it.
  async timeline(page) {
    const ready = "document.body.dataset.state === 'ready'";
    const pt = (i) => `#chart circle[data-key=inuse_space][data-dump="${i}"]`;
    // the URL's path and parameters, in any order
    const url = (path, q) => `location.pathname === '${path}' && [...new URLSearchParams(location.search)].map(String).sort().join('&') === '${[...new URLSearchParams(q)].map(String).sort().join('&')}' && ${ready}`;
    await page.goto(base + '/ui/timeline');
    const n = await page.waitFor("document.querySelectorAll('#chart circle[data-key=inuse_space]').length", 'points');
    out('timeline-points.txt', n + '\n');
    await page.waitFor("document.getElementById('growth')", 'the growth ranking');
    out('timeline-growth.txt', await page.eval("document.getElementById('growth').textContent"));
    const how = await page.eval("document.getElementById('timeline-info').textContent");
    check(/Click a point to open that dump in every view/.test(how) && /Shift-click/.test(how), 'the page says how: ' + how);
    await shot(page, 'timeline.png');
    // a click opens that dump
    await page.click(pt(2));
    await page.waitFor(url('/ui/top', '?d=2'), 'dump 2 open in Top');
    out('timeline-dump2.txt', await topText(page));
    check(/^Dump g\.[0-9]+\.2\.m2\.heap \(chosen on the timeline\)$/.test(await page.eval("document.getElementById('dumpline').textContent")), 'the page names the dump shown');
    // in every view: the flame graph of the same dump, from the menu
    await page.click('#nav a[data-view=flamegraph]');
    await page.waitFor(url('/ui/flamegraph', '?d=2') + " && document.querySelectorAll('#flame .fr').length > 3", 'dump 2 in the flame graph');
    await page.type('#flame-search', '^build_cache$');
    await page.waitFor("document.getElementById('matched') && document.getElementById('matched').textContent.startsWith('Matched')", 'the matched share');
    out('timeline-dump2-flame.txt', await page.eval("document.getElementById('matched').dataset.sum") + '\n');
    // back on the timeline, dump 2 is marked as the one shown
    await page.click('#nav a[data-view=timeline]');
    await page.waitFor(url('/ui/timeline', '?d=2') + ' && !!document.querySelector(\'' + pt(2) + '.open\')', 'dump 2 marked on the timeline');
    // Shift-click a first point, click a second: their difference
    await page.click(pt(1), 'left', 8);
    await page.waitFor(url('/ui/timeline', '?b=1&cmp=1') + ' && !!document.querySelector(\'' + pt(1) + '.base\')', 'dump 1 the base');
    check(/^Base: g\.[0-9]+\.1\.m1\.heap\. Click a second point/.test(await page.eval("document.getElementById('timeline-info').textContent")), 'the page asks for the second point');
    await page.eval('window.__before_reload = 1; location.reload()');
    await page.waitFor('!window.__before_reload && document.readyState === "complete" && ' + url('/ui/timeline', '?b=1&cmp=1') + ' && !!document.querySelector(\'' + pt(1) + '.base\')', 'the base kept by a reload');
    await page.click(pt(n - 1));
    await page.waitFor(url('/ui/top', `?d=${n - 1}&b=1`), 'the diff of two dumps');
    out('timeline-diff.txt', await topText(page));
    // Compare two dumps with the button, the newer one first
    await page.goto(base + '/ui/timeline');
    await page.click('#compare');
    await page.waitFor(url('/ui/timeline', '?cmp=1'), 'compare mode');
    await page.click(pt(3));
    await page.waitFor(url('/ui/timeline', '?b=3&cmp=1'), 'the first of two');
    await page.click(pt(0));
    await page.waitFor(url('/ui/top', '?d=3&b=0'), 'the diff of dumps 0 and 3');
    out('timeline-diff03.txt', await topText(page));
    await page.back();
    await page.waitFor(url('/ui/timeline', '?b=3&cmp=1'), 'Back: the first of two again');
    await page.click('#compare');
    await page.waitFor(url('/ui/timeline', ''), 'the comparison cancelled');
    await clean(page, 'timeline');
  },

  // A thread of one dump of a series: a click on the last point, the
  // thread picked in the menu; Top and the flame graph are its share.
  async seriesthread(page) {
    await page.goto(base + '/ui/timeline');
    const n = await page.waitFor("document.querySelectorAll('#chart circle[data-key=inuse_space]').length", 'points');
    await page.click(`#chart circle[data-key=inuse_space][data-dump="${n - 1}"]`);
    await page.waitFor(`location.pathname === '/ui/top' && location.search === '?d=${n - 1}' && document.body.dataset.state === 'ready'`, 'the last dump in Top');
    check(await page.eval("!document.getElementById('thread-label').hidden"), 'the thread menu is offered for a dump of a series');
    await page.choose('#t', '4');
    await page.click('#apply');
    await page.waitFor("new URLSearchParams(location.search).get('t') === '4' && new URLSearchParams(location.search).get('d') !== null && document.body.dataset.state === 'ready'", 'thread 4 of the dump');
    out('series-thread-top.txt', await topText(page));
    await page.click('#nav a[data-view=flamegraph]');
    await page.waitFor("location.pathname === '/ui/flamegraph' && document.body.dataset.state === 'ready' && document.querySelectorAll('#flame .fr').length > 2", 'its flame graph');
    await page.type('#flame-search', '^worker$');
    await page.waitFor("document.getElementById('matched') && document.getElementById('matched').textContent.startsWith('Matched')", 'the matched share');
    out('series-thread-matched.txt', await page.eval("document.getElementById('matched').dataset.sum") + '\n');
    await clean(page, 'seriesthread');
  },

  // Churn picked in the Value menu of a profile with allocation counts.
  async churn(page) {
    await page.goto(base + '/ui/top');
    const values = await page.eval("[...document.querySelectorAll('#si option')].map((o) => o.value).join(',')");
    check(values === 'inuse_space,inuse_objects,alloc_space,alloc_objects,churn_space,churn_objects', 'the Value menu offers churn: ' + values);
    await page.choose('#si', 'churn_s');
    check(await page.eval("document.getElementById('si').value") === 'churn_space', 'churn_space chosen in the menu');
    await page.click('#apply');
    await page.waitFor("new URLSearchParams(location.search).get('si') === 'churn_space' && document.body.dataset.state === 'ready'", 'churn in the URL');
    out('churn-top.txt', await topText(page));
    await page.click('#copycmd');
    out('churn-cmd.txt', await page.waitFor("!document.getElementById('cmdline').hidden && document.getElementById('cmdtext').value", 'the command line') + '\n');
    await page.click('#nav a[data-view=flamegraph]');
    await page.waitFor("location.pathname === '/ui/flamegraph' && document.body.dataset.state === 'ready' && document.querySelectorAll('#flame .fr').length > 2", 'the flame graph of churn');
    await page.type('#flame-search', '^log_request$');
    await page.waitFor("document.getElementById('matched') && document.getElementById('matched').textContent.startsWith('Matched')", 'the matched share');
    out('churn-matched.txt', await page.eval("document.getElementById('matched').dataset.sum") + '\n');
    await clean(page, 'churn');
  },

  // Live: the chart grows as the program dumps, and with "Dump now".
  async live(page) {
    await page.goto(base + '/ui/timeline');
    const n0 = await page.waitFor("document.querySelectorAll('#chart circle[data-key=inuse_space]').length", 'points');
    await page.click('#dump-now');
    await page.waitFor(`document.querySelectorAll('#chart circle[data-key=inuse_space]').length === ${n0 + 1}`, 'a new point after Dump now', 60000);
    out('live-1.txt', (n0 + 1) + '\n');
    // the shell dumps from outside (jheap dump PID) once it sees this file
    out('live-ready', '');
    await page.waitFor(`document.querySelectorAll('#chart circle[data-key=inuse_space]').length === ${n0 + 2}`, 'a new point after jheap dump', 60000);
    out('live-2.txt', (n0 + 2) + '\n');
    await shot(page, 'timeline-live.png');
    await clean(page, 'live');
  },

  // Hostile names and files in every view: shown as text, nothing runs.
  async hostile(page) {
    const views = ['top', '', 'flamegraph', 'peek?f=.', 'source?f=.', 'disasm?f=.', 'top?g=lines', 'flamegraph?g=lines', '?g=lines', 'top?g=files'];
    let shown = 0;
    for (const v of views) {
      await page.goto(base + '/ui/' + v);   // drawn: the page says it is ready
      if (v.startsWith('disasm')) await page.waitFor("document.getElementById('disasm').dataset.loaded === '1'", 'the disassembly frame');
      const text = await page.eval("document.body.innerText + [...document.querySelectorAll('svg text, .fr')].map((e) => e.textContent).join(' ')");
      if (/<script>|onerror=/.test(text)) shown++;
      if (v.startsWith('flamegraph')) {
        for (const sel of ['#flame .fr:nth-child(3)', '#flame .fr:nth-child(4)']) {
          if (await page.eval(`!!document.querySelector('${sel}')`)) await page.hover(sel);
        }
      }
      if (v === 'top') {
        await page.click('#top tbody tr');
        await page.waitFor("!document.getElementById('menu').hidden", 'the menu of a hostile row');
        await page.click('#menu button[data-action=focus]');
        await page.ready();
      }
      await clean(page, 'view ' + v);
    }
    check(shown >= 5, 'the hostile names are shown as text in ' + shown + ' views');
    check(await page.eval('document.querySelectorAll("img, script:not([src]), iframe:not(.disasm)").length') === 0, 'no element made of a name');
  },

  // The views of the README: peek, source and disassembly.
  async views(page) {
    for (const [v, name, sel] of [['peek?f=^cache_get$', 'peek.png', '#report'], ['source?f=^cache_store_value$', 'source.png', '#report'], ['disasm?f=^cache_store_value$', 'disasm.png', '#disasm']]) {
      await page.goto(base + '/ui/' + v);
      await page.waitFor(`!!document.querySelector('${sel}')`, v);
      if (sel === '#report') out(name.replace('.png', '.txt'), await page.eval("document.getElementById('report').textContent"));
      if (sel === '#disasm') await page.waitFor("document.getElementById('disasm').dataset.loaded === '1'", 'the disassembly frame');
      await shot(page, name);
    }
    await clean(page, 'views');
  },
};

(async () => {
  const b = await launch();
  let rc = 0;
  try {
    const page = await b.page();
    await scenarios[scenario](page);
  } catch (e) {
    console.error('not ok: ' + scenario + ': ' + (e.stack || e));
    rc = 1;
  } finally {
    await b.close();
  }
  process.exit(rc);
})();
