// Opens fleetgraph's dashboard in a real Chromium (the system's, driven by
// playwright-core) and walks each view's main flow as a person would, then
// checks the viewer role, keyboard navigation and accessibility (axe-core).
// It prints one JSON object of observations; the Go test
// (server/dashboard_browser_test.go) judges them.
//
// Environment: FLEETGRAPH_URL, ADMIN_KEY, VIEWER_KEY, CHROMIUM, PROBE_ID,
// OPEN_ANOMALY, OTHER_OPEN, LIVE_ANOMALY (the episode the test adds while the
// page is open), SCREENSHOTS (a directory, optional).
'use strict';

const path = require('path');
const run = require('./run');

const env = (name) => {
  const v = process.env[name];
  if (!v) { console.error(`dashboard.js needs ${name}`); process.exit(2); }
  return v;
};
const base = env('FLEETGRAPH_URL');
const adminKey = env('ADMIN_KEY');
const viewerKey = env('VIEWER_KEY');
const executablePath = env('CHROMIUM');
const probeId = env('PROBE_ID');
const openAnomaly = env('OPEN_ANOMALY');
const otherOpen = env('OTHER_OPEN');
const liveAnomaly = env('LIVE_ANOMALY');
const shots = process.env.SCREENSHOTS || '';

const out = { consoleErrors: [], offsite: [], failed: [], steps: [] };

function watch(page) {
  page.on('console', (m) => { if (m.type() === 'error') out.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => out.consoleErrors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) out.offsite.push(r.url()); });
  page.on('response', (r) => { if (r.status() >= 400) out.failed.push(`${r.status()} ${r.url()}`); });
}

async function shot(page, name) {
  if (!shots) return;
  await page.waitForTimeout(300); // charts settle
  await page.screenshot({ path: path.join(shots, `dashboard-${name}.png`), fullPage: false });
}

async function text(page, sel) { return ((await page.textContent(sel)) || '').trim(); }

async function signIn(page, key) {
  await page.goto(base + '/', { waitUntil: 'load' });
  await page.fill('#api-key', key);
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=role]');
}

let current = null; // the page a failed step is reported from
async function step(name, fn) {
  try {
    out[name] = await fn();
  } catch (e) {
    let seen = '';
    try { seen = current ? ((await current.textContent('main', { timeout: 1000 })) || '').slice(0, 600) : ''; } catch { /* gone */ }
    out[name] = { error: `${String(e && e.message || e).split('\n')[0]}; the page showed: ${seen}` };
  }
  out.steps.push(name);
}

run(executablePath, async (browser) => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // Every WebSocket to /graphql passes through this route, so that the
  // script can cut it (an outage: open sockets closed, new ones refused).
  const sockets = [];
  let outage = false;
  await context.routeWebSocket(/\/graphql$/, (ws) => {
    if (outage) { ws.close({ code: 1013, reason: 'outage' }); return; }
    ws.connectToServer();
    sockets.push(ws);
  });
  const cut = async (on) => {
    outage = on;
    if (on) { for (const ws of sockets.splice(0)) await ws.close({ code: 1001, reason: 'outage' }); }
  };
  const page = await context.newPage();
  current = page;
  page.setDefaultTimeout(20000);
  watch(page);

  await step('fleet', async () => {
    await signIn(page, adminKey);
    await page.waitForSelector('[data-testid=fleet] tbody tr');
    await page.waitForFunction(() => /\d+ probes/.test(document.querySelector('[data-testid=fleet-total]').textContent));
    const rows = await page.$$eval('[data-testid=fleet] tbody tr', (trs) => trs.map((tr) => tr.textContent));
    await page.fill('input[type=search]', 'probe-0003');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=fleet] tbody tr').length === 1);
    const searched = await text(page, '[data-testid=fleet] tbody tr');
    await page.fill('input[type=search]', '');
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=fleet] tbody tr').length === n, rows.length);
    await shot(page, 'fleet');
    return { rows: rows.length, first: rows[0], total: await text(page, '[data-testid=fleet-total]'), searched, role: await text(page, '[data-testid=role]') };
  });

  await step('keyboard', async () => {
    // A fresh load: Tab starts from the top of the document.
    await page.reload();
    await page.waitForSelector('[data-testid=fleet] tbody tr');
    const visited = [];
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      const t = await page.evaluate(() => (document.activeElement && document.activeElement.textContent || '').trim());
      visited.push(t);
      if (t === 'Anomalies') break;
    }
    await page.keyboard.press('Enter');
    // The hash changes at once; the view takes the focus in the hashchange
    // event, which the browser delivers a task later: wait for both.
    await page.waitForFunction(() => location.hash === '#/anomalies' && document.activeElement && document.activeElement.id === 'main',
      null, { timeout: 5000 }).catch(() => {});
    // The view got the focus (main), so the next Tab goes into it.
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    return { visited, hash: await page.evaluate(() => location.hash), focused };
  });

  await step('resolve', async () => {
    await page.goto(base + '/#/anomalies');
    const row = `tr[data-anomaly="${openAnomaly}"]`;
    await page.waitForSelector(row);
    await page.click(`${row} button:has-text("Resolve")`);
    await page.waitForSelector('.note:has-text("Resolved")');
    await page.waitForSelector(row, { state: 'detached' });
    return { note: await text(page, '.note') };
  });

  await step('feedback', async () => {
    const row = `tr[data-anomaly="${otherOpen}"]`;
    await page.click(`${row} button[aria-label^="Not useful"]`);
    await page.waitForSelector('.note:has-text("Feedback noted")');
    await page.waitForSelector('[data-testid=overrides] tbody tr');
    await shot(page, 'anomalies');
    return { note: await text(page, '.note'), overrides: await page.$$eval('[data-testid=overrides] tbody tr', (t) => t.map((r) => r.textContent)) };
  });

  await step('live', async () => {
    // The test adds LIVE_ANOMALY once the resolve above is stored.
    await page.waitForSelector('[data-testid=feed] li:has-text("anomaly_event.created")', { timeout: 30000 });
    await page.waitForSelector(`tr[data-anomaly="${liveAnomaly}"]`, { timeout: 15000 });
    return { feed: await text(page, '[data-testid=feed]'), row: true, link: await text(page, '[data-testid=link]') };
  });

  await step('lost', async () => {
    await cut(true);
    let lost = '';
    try {
      await page.waitForFunction(() => /lost/i.test(document.querySelector('[data-testid=link]').textContent), null, { timeout: 10000 });
      await page.waitForTimeout(1500); // a retry or two refused
      lost = await text(page, '[data-testid=link]');
    } finally {
      await cut(false);
    }
    await page.waitForFunction(() => /^Live$/.test(document.querySelector('[data-testid=link]').textContent), null, { timeout: 30000 });
    return { lost, resumed: await text(page, '[data-testid=link]') };
  });

  await step('probe', async () => {
    await page.goto(`${base}/#/probe/${probeId}`);
    await page.waitForSelector('.uplot canvas');
    await page.waitForFunction(() => /\d+ intervals/.test((document.querySelector('[data-testid=chart-summary]') || {}).textContent || ''));
    // Each chart is drawn by its own effect after its view renders: wait
    // for the system status chart (or its "no records" line) before
    // counting; if it never comes, the count says so and the Go test fails.
    await page.waitForFunction(() => document.querySelectorAll('.uplot').length >= 2 ||
      /No system status records/.test(document.body.textContent), null, { timeout: 10000 }).catch(() => {});
    await shot(page, 'probe');
    return {
      title: await text(page, 'h1'),
      summary: await text(page, '[data-testid=chart-summary]'),
      charts: await page.$$eval('.uplot', (c) => c.length),
      episodes: await page.$$eval('[data-testid=probe-anomalies] tbody tr', (t) => t.map((r) => r.textContent)),
    };
  });

  await step('publish', async () => {
    await page.goto(`${base}/#/configs`);
    await page.click('button:has-text("Edit draft")');
    await page.waitForSelector('textarea');
    await page.click('button:has-text("Save draft")');
    await page.waitForSelector('.note:has-text("Saved a draft")');
    await page.click('button:has-text("Publish draft")');
    await page.waitForSelector('.note:has-text("Published")');
    await shot(page, 'configs');
    return { note: await text(page, '.note') };
  });

  await step('redeliver', async () => {
    await page.goto(`${base}/#/webhooks`);
    await page.click('button:has-text("Send test")');
    await page.waitForSelector('.note:has-text("Test delivery")');
    const row = '[data-testid=deliveries] tbody tr:has-text("webhook.test")';
    await page.waitForSelector(`${row} button:has-text("Redeliver")`);
    await page.click(`${row} button:has-text("Redeliver")`);
    await page.waitForSelector('.note:has-text("Redelivered")');
    await shot(page, 'webhooks');
    return { note: await text(page, '.note') };
  });

  await step('views', async () => {
    const seen = {};
    for (const v of ['users', 'settings', 'license', 'ai']) {
      await page.goto(`${base}/#/${v}`);
      await page.waitForSelector('h1');
      await page.waitForLoadState('networkidle');
      seen[v] = { h1: await text(page, 'h1'), error: (await page.$('.error')) ? await text(page, '.error') : '' };
      if (v === 'license') await shot(page, 'license');
    }
    return seen;
  });

  await step('viewer', async () => {
    const vc = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const vp = await vc.newPage();
    vp.setDefaultTimeout(20000);
    watch(vp);
    await signIn(vp, viewerKey);
    await vp.goto(`${base}/#/anomalies`);
    await vp.waitForSelector(`tr[data-anomaly="${otherOpen}"]`);
    const anomalyButtons = await vp.$$eval('[data-testid=anomalies] button', (b) => b.map((x) => x.textContent));
    await vp.goto(`${base}/#/configs`);
    await vp.waitForSelector('h3:has-text("Versions")');
    const configButtons = await vp.$$eval('main button', (b) => b.map((x) => x.textContent));
    await vp.goto(`${base}/#/webhooks`);
    await vp.waitForSelector('[data-testid=deliveries] tbody tr');
    const webhookButtons = await vp.$$eval('main button', (b) => b.map((x) => x.textContent));
    const role = await text(vp, '[data-testid=role]');
    await vc.close();
    return { role, anomalyButtons, configButtons, webhookButtons };
  });

  await step('axe', async () => {
    // axe-core is injected as a script: this context alone bypasses the page's CSP for it.
    const ac = await browser.newContext({ bypassCSP: true, viewport: { width: 1400, height: 900 } });
    await ac.addInitScript((k) => sessionStorage.setItem('fleetgraph.apiKey', k), adminKey);
    const ap = await ac.newPage();
    ap.setDefaultTimeout(20000);
    const found = [];
    const scanned = [];
    for (const [view, ready] of [['fleet', '[data-testid=fleet] tbody tr'], [`probe/${probeId}`, '.uplot canvas'],
      ['anomalies', '[data-testid=anomalies] tbody tr'], ['configs', 'h3'], ['webhooks', '[data-testid=deliveries] tbody tr'],
      ['users', '[data-testid=users] tbody tr'], ['settings', 'form'], ['license', 'h1'], ['ai', 'h1']]) {
      await ap.goto(`${base}/#/${view}`);
      await ap.waitForSelector(ready);
      await ap.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
      const res = await ap.evaluate(() => window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }));
      scanned.push(view);
      for (const v of res.violations) {
        found.push({ view, id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) });
      }
    }
    await ac.close();
    return { scanned, violations: found };
  });
  return out;
});
