// Chromium keeps its singleton socket under TMPDIR; a unix socket's path is
// limited to about 104 bytes, so under a long TMPDIR (CI runs the tests
// with one of 100 characters) Chromium aborts at start. Required before
// playwright launches it: with a long TMPDIR the browser gets a short one of
// its own under /tmp, removed when the script exits.
'use strict';
const fs = require('fs');
const os = require('os');

if (os.tmpdir().length > 40) {
  const dir = fs.mkdtempSync('/tmp/fgb-');
  process.env.TMPDIR = dir;
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}
