// Times the dashboard in a real Chromium (playwright-core, the system's
// browser) as a person sees it: the fleet view's first render (from the
// navigation until the first page of probes and the total are on screen)
// and a probe's chart (from following the link until the chart and its
// summary are drawn), for one probe and for three side by side. Prints one
// JSON object of milliseconds per round; server/dashboard_bench_test.go
// reports them.
//
// Environment: FLEETGRAPH_URL, ADMIN_KEY, CHROMIUM, PROBE_IDS (comma
// separated, the first charted alone), ROUNDS (default 5).
'use strict';

const run = require('./run');

const base = process.env.FLEETGRAPH_URL;
const key = process.env.ADMIN_KEY;
const executablePath = process.env.CHROMIUM;
const probes = (process.env.PROBE_IDS || '').split(',').filter(Boolean);
const rounds = Number(process.env.ROUNDS || 5);
if (!base || !key || !executablePath || probes.length < 3) {
  console.error('dashboard-bench.js needs FLEETGRAPH_URL, ADMIN_KEY, CHROMIUM and three PROBE_IDS');
  process.exit(2);
}

// chartDrawn resolves, in the page, once the metric chart and its summary are drawn.
function untilChart() {
  return new Promise((resolve) => {
    const done = () => document.querySelector('.uplot canvas') && /\d+ intervals/.test((document.querySelector('[data-testid=chart-summary]') || {}).textContent || '');
    const poll = () => (done() ? resolve(performance.now()) : requestAnimationFrame(poll));
    poll();
  });
}

run(executablePath, async (browser) => {
  const out = { fleetCold: [], fleetWarm: [], chart: [], chart3: [], rows: 0, total: '', requests: {} };
  // The GraphQL requests' durations of the step just timed (the last round's are kept).
  const requests = (page, step) => page.evaluate(() => {
    const d = performance.getEntriesByType('resource').filter((e) => e.name.includes('/graphql')).map((e) => Math.round(e.duration));
    performance.clearResourceTimings();
    return d;
  }).then((d) => { out.requests[step] = d; });
  for (let r = 0; r < rounds; r++) {
    // A new context each round: the first load of the round is cold (no HTTP cache), the second warm.
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    await context.addInitScript((k) => sessionStorage.setItem('fleetgraph.apiKey', k), key);
    const page = await context.newPage();
    page.setDefaultTimeout(30000);
    for (const series of [out.fleetCold, out.fleetWarm]) {
      await page.goto(base + '/?r=' + r + series.length + '#/fleet', { waitUntil: 'commit' });
      await page.waitForFunction(() => document.querySelectorAll('[data-testid=fleet] tbody tr').length === 50 &&
        /\d+ probes/.test((document.querySelector('[data-testid=fleet-total]') || {}).textContent || ''), null, { polling: 'raf' });
      series.push(await page.evaluate(() => performance.now())); // since the navigation started
      await requests(page, series === out.fleetCold ? 'fleetCold' : 'fleetWarm');
    }
    out.rows = await page.$$eval('[data-testid=fleet] tbody tr', (t) => t.length);
    out.total = await page.textContent('[data-testid=fleet-total]');
    for (const [series, ids] of [[out.chart, [probes[0]]], [out.chart3, probes.slice(0, 3)]]) {
      const t0 = await page.evaluate((hash) => { const t = performance.now(); location.hash = hash; return t; }, `#/probe/${ids.join('/')}`);
      const t1 = await page.evaluate(untilChart);
      series.push(t1 - t0);
      await requests(page, ids.length === 1 ? 'chart' : 'chart3');
      if (!out.summary) out.summary = await page.textContent('[data-testid=chart-summary]');
      await page.evaluate(() => { location.hash = '#/fleet'; });
      await page.waitForSelector('[data-testid=fleet] tbody tr');
    }
    await context.close();
  }
  return out;
});
