// The frame of the dashboard's browser scripts: launch the system's
// Chromium, let the script observe, close it, print the observations as one
// JSON object (a failure: its stack on stderr, exit 1).
'use strict';

require('./shorttmp'); // before Chromium starts: a short TMPDIR for its socket
const { chromium } = require('playwright-core');

module.exports = async function run(executablePath, observe) {
  try {
    const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    let out;
    try {
      out = await observe(browser);
    } finally {
      await browser.close();
    }
    process.stdout.write(JSON.stringify(out));
  } catch (err) {
    console.error(err && err.stack || String(err));
    process.exit(1);
  }
};
