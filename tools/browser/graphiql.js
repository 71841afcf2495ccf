// Opens fleetgraph's GraphiQL page in a real Chromium (the system's, driven
// by playwright-core) and records what a new user sees: without a key, with
// a wrong key, then with a good one; the query a new tab opens with; a
// subscription while probes register. It prints one JSON object of
// observations; the Go test (server/graphiql_browser_test.go) judges them.
//
// Environment: FLEETGRAPH_URL (the server's base URL), GOOD_KEY (an admin
// key), REGISTRATION_KEY (a registration key of the same data owner),
// CHROMIUM (the browser's executable).
'use strict';

require('./shorttmp'); // before Chromium starts: a short TMPDIR for its socket
const { chromium } = require('playwright-core');

const base = process.env.FLEETGRAPH_URL;
const goodKey = process.env.GOOD_KEY;
const executablePath = process.env.CHROMIUM;
const registrationKey = process.env.REGISTRATION_KEY;
if (!base || !goodKey || !executablePath || !registrationKey) {
  console.error('graphiql.js needs FLEETGRAPH_URL, GOOD_KEY, REGISTRATION_KEY and CHROMIUM');
  process.exit(2);
}

const statusLine = '#fg-auth-status';
const docsButton = 'button[aria-label="Show Documentation Explorer"]';
const docsPanel = '.graphiql-doc-explorer';
const resultPane = '.result-window';

async function main() {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const out = { responses: [], consoleErrors: [], offsite: [] };
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20000);
    page.on('response', (r) => out.responses.push({ url: r.url(), status: r.status() }));
    page.on('console', (m) => { if (m.type() === 'error') out.consoleErrors.push(m.text()); });
    page.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith('data:')) { out.offsite.push(r.url()); }
    });

    // 1. No key: the status line and the documentation panel.
    await page.goto(base + '/graphql', { waitUntil: 'load' });
    await page.waitForSelector('.graphiql-container');
    out.defaultQuery = await page.evaluate(() =>
      document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue());
    // The browser asks for the favicon on its own; ask once more so that
    // the answer is recorded whatever the browser's timing.
    out.favicon = await page.evaluate(async () => (await fetch('/favicon.ico')).status);
    await page.click(docsButton);
    await page.waitForSelector(docsPanel + ' .fg-docs-hint');
    out.noKey = {
      status: await page.textContent(statusLine),
      docs: await page.textContent(docsPanel),
    };

    // 2. A wrong key: applied, then a query run.
    await page.fill('#fg-api-key', 'fg_wrong_key_0000');
    await page.click('#fg-api-key-apply');
    await page.waitForFunction((sel) => /Rejected/.test(document.querySelector(sel).textContent), statusLine);
    await setQuery(page, '{ __typename }');
    await page.click('.graphiql-execute-button');
    await page.waitForFunction((sel) => /\S/.test((document.querySelector(sel) || {}).textContent || ''), resultPane);
    out.wrongKey = {
      status: await page.textContent(statusLine),
      result: await page.textContent(resultPane),
      docs: await textOrEmpty(page, docsPanel),
    };

    // 3. The good key: applied; the rejected answer must go, and a query works.
    await page.fill('#fg-api-key', goodKey);
    await page.click('#fg-api-key-apply');
    await page.waitForFunction((sel) => /Accepted/.test(document.querySelector(sel).textContent), statusLine);
    out.goodKeyBeforeRun = {
      status: await page.textContent(statusLine),
      result: await textOrEmpty(page, resultPane),
    };
    // Apply pressed again with the same key sends nothing new; the
    // server's verdict must stay on the status line.
    await page.click('#fg-api-key-apply');
    out.goodKeyReapplied = await page.textContent(statusLine);
    await setQuery(page, '{ __typename }');
    await page.click('.graphiql-execute-button');
    await page.waitForFunction((sel) => /__typename/.test((document.querySelector(sel) || {}).textContent || ''), resultPane);
    if (!(await page.$(docsPanel))) { await page.click(docsButton); }
    await page.waitForFunction((sel) => /Query/.test((document.querySelector(sel) || {}).textContent || ''), docsPanel);
    out.goodKey = {
      status: await page.textContent(statusLine),
      result: await page.textContent(resultPane),
      docs: await page.textContent(docsPanel),
    };

    // 4. A subscription streams: run once, it shows each probe that
    // registers after it started, one event after the other. Probes
    // register until two of them have shown (the first may come before the
    // server has the subscription).
    await setQuery(page, 'subscription Live { events(types: ["client.registered"]) { type data } }');
    const streaming = page.waitForRequest((r) => r.url().endsWith('/graphql') && /event-stream/.test(r.headers().accept || ''));
    await page.click('.graphiql-execute-button');
    await streaming;
    out.subscription = { labels: [], results: [] };
    for (let i = 1; out.subscription.labels.length < 2 && i <= 12; i++) {
      const label = 'graphiql-live-' + i;
      const r = await fetch(base + '/client_api/v1/register', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ registration_key: registrationKey, label }),
      });
      if (r.status !== 201) { throw new Error('register ' + label + ': HTTP ' + r.status + ' ' + (await r.text())); }
      try {
        await page.waitForFunction(([sel, l]) => ((document.querySelector(sel) || {}).textContent || '').includes('"' + l + '"'),
          [resultPane, label], { timeout: 5000 });
      } catch (e) {
        continue; // not shown: registered before the subscription was there
      }
      out.subscription.labels.push(label);
      out.subscription.results.push(await page.textContent(resultPane));
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
}

// setQuery replaces the query editor's text (GraphiQL 4 edits with CodeMirror 5).
async function setQuery(page, query) {
  await page.evaluate((q) => {
    const cm = document.querySelector('.graphiql-query-editor .CodeMirror');
    cm.CodeMirror.setValue(q);
  }, query);
}

async function textOrEmpty(page, selector) {
  const el = await page.$(selector);
  return el ? (await el.textContent()) || '' : '';
}

main().catch((err) => {
  console.error(err && err.stack || String(err));
  process.exit(1);
});
