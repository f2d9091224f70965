// A small Chrome DevTools Protocol client over --remote-debugging-pipe:
// chromium reads commands on its descriptor 3 and writes answers and
// events on 4, one JSON message per NUL-terminated chunk.  No package and
// no port: node starts chromium and talks to it through two pipes.
//
//   const { launch } = require('./cdp');
//   const b = await launch();           // headless chromium, empty profile
//   const page = await b.page();         // a tab, with the watchers below
//   await page.goto(url); await page.click('#top tr'); ...
//   await b.close();                     // on every path
//
// Each page records console errors, uncaught exceptions, Content-Security-
// Policy violations (the 'securitypolicyviolation' event, installed before
// any page script) and whether window.__jheap_pwned was ever set, which the
// hostile profiles' names try to do.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const CHROME_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage', '--remote-debugging-pipe', '--window-size=1400,1000',
  '--hide-scrollbars', '--mute-audio', '--disable-extensions'];

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

async function launch(opts = {}) {
  const bin = process.env.CHROMIUM || 'chromium';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jheap-chromium-'));
  const child = spawn(bin, [...CHROME_FLAGS, '--user-data-dir=' + dir, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  // chromium never outlives this script, however it ends (timeout(1)'s
  // SIGTERM included)
  const killChild = () => { try { child.kill('SIGKILL'); } catch (e) { /* gone */ } };
  process.on('exit', killChild);
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => { killChild(); process.exit(1); });
  const out = child.stdio[3], inp = child.stdio[4];
  let id = 0, buf = Buffer.alloc(0), exited = false;
  const pending = new Map(), listeners = new Set();
  child.on('exit', () => {
    exited = true;
    for (const [, p] of pending) p.reject(new Error('chromium exited: ' + stderr.slice(-2000)));
    pending.clear();
  });
  inp.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    let z;
    while ((z = buf.indexOf(0)) >= 0) {
      const msg = JSON.parse(buf.subarray(0, z).toString('utf8'));
      buf = buf.subarray(z + 1);
      if (msg.id !== undefined && pending.has(msg.id)) {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) p.reject(new Error(p.method + ': ' + JSON.stringify(msg.error))); else p.resolve(msg.result);
      } else {
        for (const l of listeners) l(msg);
      }
    }
  });
  function send(method, params = {}, sessionId) {
    if (exited) return Promise.reject(new Error('chromium is not running: ' + stderr.slice(-2000)));
    const m = { id: ++id, method, params };
    if (sessionId) m.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      pending.set(m.id, { resolve, reject, method });
      out.write(JSON.stringify(m) + '\0');
    });
  }
  const version = await Promise.race([send('Browser.getVersion'),
    sleep(opts.startTimeout || 60000).then(() => { throw new Error('chromium did not answer in time: ' + stderr); })]);
  const browser = {
    version,
    async page() { return makePage(send, listeners); },
    async close() {
      try { await Promise.race([send('Browser.close'), sleep(5000)]); } catch (e) { /* gone */ }
      if (!exited) child.kill('SIGKILL');
      for (let k = 0; k < 50 && !exited; k++) await sleep(100);
      fs.rmSync(dir, { recursive: true, force: true });
    },
    kill() { if (!exited) child.kill('SIGKILL'); },
  };
  return browser;
}

async function makePage(send, listeners) {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const s = (method, params) => send(method, params, sessionId);
  const page = { errors: [], violations: [], console: [], loads: 0, sessionId };
  listeners.add((msg) => {
    if (msg.sessionId !== sessionId) return;
    if (msg.method === 'Runtime.exceptionThrown') page.errors.push(JSON.stringify(msg.params.exceptionDetails).slice(0, 600));
    if (msg.method === 'Runtime.consoleAPICalled') {
      const text = msg.params.args.map((a) => a.value !== undefined ? String(a.value) : a.description || '').join(' ');
      if (text.startsWith('CSP-VIOLATION ')) page.violations.push(text.slice(14));
      else page.console.push(msg.params.type + ': ' + text);
    }
    if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error') page.console.push('log: ' + msg.params.entry.text);
    if (msg.method === 'Page.loadEventFired') page.loads++;
  });
  await s('Page.enable');
  await s('Runtime.enable');
  await s('Log.enable');
  // before any script of the page: CSP violations and the hostile flag
  await s('Page.addScriptToEvaluateOnNewDocument', { source: `
    document.addEventListener('securitypolicyviolation', (e) =>
      console.log('CSP-VIOLATION ' + e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));
    Object.defineProperty(window, '__jheap_pwned', { set(v) { console.log('CSP-VIOLATION script ran: ' + v); }, get() { return undefined; } });
  ` });
  await s('Emulation.setDeviceMetricsOverride', { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });

  page.send = s;
  page.eval = async (expr) => {
    const r = await s('Runtime.evaluate', { expression: expr, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error('evaluate ' + expr.slice(0, 200) + ': ' + JSON.stringify(r.exceptionDetails).slice(0, 500));
    return r.result.value;
  };
  // Waits until EXPR is truthy (a deadline, never a fixed sleep).
  page.waitFor = async (expr, what, timeout = 30000) => {
    const end = Date.now() + timeout;
    let last;
    while (Date.now() < end) {
      try { last = await page.eval(expr); if (last) return last; } catch (e) { last = e.message; }
      await sleep(50);
    }
    throw new Error('timed out waiting for ' + (what || expr) + ' (last: ' + JSON.stringify(last) + ')');
  };
  page.ready = () => page.waitFor("document.body && document.body.dataset.state === 'ready'", 'the view to be drawn');
  page.goto = async (url) => {
    await s('Page.navigate', { url });
    await page.waitFor("document.readyState === 'complete' && location.href !== 'about:blank'", 'the page ' + url);
    await page.ready();
  };
  // The centre of the first element matching SELECTOR, scrolled into view.
  page.center = async (selector) => {
    const r = await page.eval(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
      if (!e) return null; e.scrollIntoView({block: 'center', inline: 'center'}); const r = e.getBoundingClientRect();
      return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2, r.width, r.height]; })()`);
    if (!r) throw new Error('no element ' + selector);
    return r;
  };
  page.mouse = async (type, x, y, button = 'left', clickCount = 1, modifiers = 0) => {
    await s('Input.dispatchMouseEvent', { type, x, y, button, clickCount, modifiers, buttons: type === 'mouseReleased' ? 0 : (button === 'right' ? 2 : 1) });
  };
  // A click as a person makes one: move, press, release at the element;
  // MODIFIERS held (CDP's bits: 1 Alt, 2 Ctrl, 4 Meta, 8 Shift).
  page.click = async (selector, button = 'left', modifiers = 0) => {
    await page.waitFor(`!!document.querySelector(${JSON.stringify(selector)})`, selector);
    const [x, y] = await page.center(selector);
    await s('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y, modifiers });
    await page.mouse('mousePressed', x, y, button, 1, modifiers);
    await page.mouse('mouseReleased', x, y, button, 1, modifiers);
  };
  page.hover = async (selector) => {
    const [x, y] = await page.center(selector);
    await s('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y });
  };
  // Types TEXT into the field SELECTOR (replacing it) and presses Enter.
  page.type = async (selector, text, enter = true) => {
    await page.click(selector);
    await page.eval(`document.querySelector(${JSON.stringify(selector)}).select()`);
    await s('Input.insertText', { text });
    if (enter) {
      await s('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, text: '\r' });
      await s('Input.dispatchKeyEvent', { type: 'keyUp', key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13 });
    }
  };
  // Empties the field SELECTOR as a person does: select it all, Backspace.
  page.clear = async (selector) => {
    await page.click(selector);
    await page.eval(`document.querySelector(${JSON.stringify(selector)}).select()`);
    await s('Input.dispatchKeyEvent', { type: 'rawKeyDown', key: 'Backspace', code: 'Backspace', windowsVirtualKeyCode: 8 });
    await s('Input.dispatchKeyEvent', { type: 'keyUp', key: 'Backspace', code: 'Backspace', windowsVirtualKeyCode: 8 });
  };
  // Picks the option of the <select> SELECTOR whose text starts with
  // TEXT as a person does with the keyboard: focus it and type.
  page.choose = async (selector, text) => {
    await page.click(selector);
    await s('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Escape', code: 'Escape', windowsVirtualKeyCode: 27 });
    await s('Input.dispatchKeyEvent', { type: 'keyUp', key: 'Escape', code: 'Escape', windowsVirtualKeyCode: 27 });
    await page.eval(`document.querySelector(${JSON.stringify(selector)}).focus()`);
    for (const ch of text) {
      await s('Input.dispatchKeyEvent', { type: 'keyDown', key: ch, text: ch, unmodifiedText: ch });
      await s('Input.dispatchKeyEvent', { type: 'keyUp', key: ch });
    }
  };
  page.screenshot = async (file) => {
    const r = await s('Page.captureScreenshot', { format: 'png', captureBeyondViewport: false });
    fs.writeFileSync(file, Buffer.from(r.data, 'base64'));
  };
  page.back = async () => { await page.eval('history.back()'); };
  page.close = async () => { try { await send('Target.closeTarget', { targetId }); } catch (e) { /* gone */ } };
  return page;
}

module.exports = { launch, sleep };
