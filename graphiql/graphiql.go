// Package graphiql serves the GraphiQL IDE without any internet access at
// view time: React, ReactDOM and GraphiQL's browser bundles are vendored into
// dist/ by build.sh and compiled into the binary with //go:embed, and the page
// references nothing but those local files.
//
// Build the assets once (and again after changing package.json), then rebuild
// the Go binary:
//
//	bash graphiql/build.sh
//
// build.sh installs the pinned npm packages (graphiql 4.1.2, react 18.2.0,
// react-dom 18.2.0), copies the UMD/CSS files into dist/ and checks them
// against the Subresource Integrity hashes that gqlgen's CDN playground uses
// for the same files. Without that step the package still compiles (dist/.keep
// is always embedded) and the page answers 503 with instructions.
//
// Mounting, with chi:
//
//	r.Get("/graphql", graphiql.Page("/graphql", "/graphiql/assets/"))
//	r.Handle("/graphiql/assets/*", graphiql.Assets("/graphiql/assets/"))
//
// or with everything under one subtree (page at /graphiql/, assets at
// /graphiql/assets/):
//
//	mux.Handle("/graphiql/", graphiql.Handler("/graphql"))
//
// The page has an "API key" box above the editor. The key is kept in the
// browser's localStorage and sent as the X-API-KEY header on every request,
// schema introspection included, together with the headers typed into
// GraphiQL's own header editor (which take precedence on a clash).
// The status line beside the box says whether the server accepted the key
// or rejected it (with the server's message) and, without a usable key, how
// to get one; so does the documentation panel below GraphiQL's "Error
// fetching schema". Applying a key after a rejection starts GraphiQL
// afresh, so the rejected answer does not linger in the response pane.
// A new tab opens with ExampleQuery (it answers on serve --demo's data).
// Queries and mutations are one POST each; subscriptions run over
// server-sent events (POST with Accept: text/event-stream), each event handed
// to GraphiQL as it arrives, so a subscription stays live until stopped.
// server/graphiql_browser_test.go checks all of it in a real browser.
package graphiql

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var embedded embed.FS

// Asset file names in dist/, as written by build.sh.
const (
	reactJS    = "react.production.min.js"
	reactDOMJS = "react-dom.production.min.js"
	graphiqlJS = "graphiql.min.js"
	graphiqlCS = "graphiql.min.css"
)

// requiredAssets are the files the page cannot work without.
var requiredAssets = []string{reactJS, reactDOMJS, graphiqlJS, graphiqlCS}

// notBuiltMessage is the body of the 503 answer given while dist/ lacks the
// vendored bundles.
const notBuiltMessage = "GraphiQL is not available: its browser assets were not built into this binary.\n" +
	"Run graphiql/build.sh (or `make assets`), then rebuild the server.\n"

// Page returns a handler for GET and HEAD requests that answers with the
// GraphiQL page. The page sends GraphQL requests to endpoint (a path such as
// "/graphql" or an absolute URL) and loads its scripts and stylesheet from
// assetsPrefix (such as "/graphiql/assets/"), which must be served by
// [Assets] with the same prefix.
//
// If the assets were not built (see the package documentation) the handler
// answers 503 Service Unavailable with a short plain-text explanation.
// Page panics if endpoint or assetsPrefix is empty.
func Page(endpoint, assetsPrefix string) http.Handler {
	return newPage(distFS(), endpoint, assetsPrefix)
}

// Assets returns a handler serving the vendored GraphiQL files for GET and
// HEAD requests whose URL path is prefix followed by a file name, such as
// "/graphiql/assets/graphiql.min.js" for prefix "/graphiql/assets/". The path
// is matched as is: mount the handler without stripping the prefix.
//
// Files are served with their content type, an ETag and Cache-Control; the
// URLs written by [Page] carry a content-hash version parameter, and requests
// carrying the current one may be cached for a year. Unknown files get 404,
// and every request gets 503 while the assets were not built.
func Assets(prefix string) http.Handler {
	return newAssets(distFS(), prefix)
}

// Handler serves the page and its assets from one subtree: a request whose
// path ends in "/assets/<file>" gets that asset and any other request gets the
// page, which refers to the assets by URLs relative to itself. Mount it on a
// subtree, e.g. mux.Handle("/graphiql/", Handler("/graphql")) or chi's
// r.Mount("/graphiql", Handler("/graphql")); wrapping it in http.StripPrefix
// works too.
// Handler panics if endpoint is empty.
func Handler(endpoint string) http.Handler {
	return newHandler(distFS(), endpoint)
}

// Missing lists the required asset files this binary was built without;
// while any is missing the page answers 503 (see the package documentation).
func Missing() []string { return loadBundle(distFS()).missing }

// distFS returns the embedded dist directory.
func distFS() fs.FS {
	sub, err := fs.Sub(embedded, "dist")
	if err != nil {
		// Cannot happen: "dist" is a valid path and the directive
		// guarantees it exists.
		panic(err)
	}
	return sub
}

// asset is one file served by the assets handler.
type asset struct {
	data        []byte
	contentType string
	version     string // hex prefix of the SHA-256 of data
	etag        string
}

// bundle is the set of files found in dist/.
type bundle struct {
	files   map[string]*asset
	missing []string // required files absent or empty
}

// loadBundle reads the regular, non-hidden files at the root of fsys.
// Unreadable entries are treated as absent.
func loadBundle(fsys fs.FS) *bundle {
	b := &bundle{files: map[string]*asset{}}
	entries, _ := fs.ReadDir(fsys, ".") // partial results are fine
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.Type().IsRegular() {
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil || len(data) == 0 {
			continue
		}
		sum := sha256.Sum256(data)
		version := hex.EncodeToString(sum[:8])
		b.files[name] = &asset{
			data:        data,
			contentType: ContentType(name),
			version:     version,
			etag:        `"` + version + `"`,
		}
	}
	for _, name := range requiredAssets {
		if b.files[name] == nil {
			b.missing = append(b.missing, name)
		}
	}
	return b
}

func (b *bundle) ready() bool { return len(b.missing) == 0 }

// url returns the URL under which the page refers to the named asset.
func (b *bundle) url(prefix, name string) string {
	return prefix + name + "?v=" + b.files[name].version
}

// ContentType is the Content-Type of a served browser file by its name's
// extension (the dashboard's files too).
func ContentType(name string) string {
	switch path.Ext(name) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".map", ".json":
		return "application/json"
	}
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// serveNotBuilt answers 503 with instructions for building the assets.
func serveNotBuilt(w http.ResponseWriter, r *http.Request, b *bundle) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprint(w, notBuiltMessage)
	fmt.Fprintf(w, "Missing from graphiql/dist/: %s\n", strings.Join(b.missing, ", "))
}

// allowGetHead answers 405 for methods other than GET and HEAD and reports
// whether the request may proceed.
func allowGetHead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
	return false
}

// pageHandler serves the HTML page.
type pageHandler struct {
	bundle       *bundle
	endpoint     string
	assetsPrefix string
}

func newPage(fsys fs.FS, endpoint, assetsPrefix string) *pageHandler {
	if endpoint == "" {
		panic("graphiql: empty endpoint")
	}
	if assetsPrefix == "" {
		panic("graphiql: empty assets prefix")
	}
	return &pageHandler{
		bundle:       loadBundle(fsys),
		endpoint:     endpoint,
		assetsPrefix: withSlash(assetsPrefix),
	}
}

func withSlash(prefix string) string {
	if strings.HasSuffix(prefix, "/") {
		return prefix
	}
	return prefix + "/"
}

func (p *pageHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.serve(w, r, p.assetsPrefix)
}

func (p *pageHandler) serve(w http.ResponseWriter, r *http.Request, assetsPrefix string) {
	if !allowGetHead(w, r) {
		return
	}
	if !p.bundle.ready() {
		serveNotBuilt(w, r, p.bundle)
		return
	}
	var buf bytes.Buffer
	err := pageTemplate.Execute(&buf, pageData{
		Endpoint:     p.endpoint,
		DefaultQuery: ExampleQuery,
		ReactJS:      template.URL(p.bundle.url(assetsPrefix, reactJS)),
		ReactDOMJS:   template.URL(p.bundle.url(assetsPrefix, reactDOMJS)),
		GraphiQLJS:   template.URL(p.bundle.url(assetsPrefix, graphiqlJS)),
		GraphiQLCS:   template.URL(p.bundle.url(assetsPrefix, graphiqlCS)),
	})
	if err != nil {
		http.Error(w, "graphiql: rendering the page failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", fmt.Sprint(buf.Len()))
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// assetHandler serves the files of a bundle under a URL path prefix.
type assetHandler struct {
	bundle *bundle
	prefix string
}

func newAssets(fsys fs.FS, prefix string) *assetHandler {
	if prefix == "" {
		panic("graphiql: empty assets prefix")
	}
	return &assetHandler{bundle: loadBundle(fsys), prefix: withSlash(prefix)}
}

func (a *assetHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, a.prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	serveAsset(w, r, a.bundle, name)
}

// serveAsset serves the named file of b.
func serveAsset(w http.ResponseWriter, r *http.Request, b *bundle, name string) {
	if !allowGetHead(w, r) {
		return
	}
	if !b.ready() {
		serveNotBuilt(w, r, b)
		return
	}
	f := b.files[name] // nil for "", names with "/", hidden and unknown files
	if f == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == f.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, no-cache")
	}
	// Embedded files have no modification time: the zero time makes
	// ServeContent omit Last-Modified and rely on the ETag alone.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.data))
}

// combinedHandler serves a page and its assets from one subtree.
type combinedHandler struct {
	page *pageHandler
}

func newHandler(fsys fs.FS, endpoint string) *combinedHandler {
	return &combinedHandler{page: newPage(fsys, endpoint, "assets/")}
}

func (c *combinedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dir, file := path.Split(r.URL.Path)
	if dir == "assets/" || strings.HasSuffix(dir, "/assets/") {
		serveAsset(w, r, c.page.bundle, file)
		return
	}
	c.page.serve(w, r, relativeAssetsPrefix(r))
}

// relativeAssetsPrefix returns the assets prefix relative to the URL the
// browser requested. The request URI is used rather than r.URL.Path so that
// the result is right under http.StripPrefix too.
func relativeAssetsPrefix(r *http.Request) string {
	p := r.URL.Path
	if r.RequestURI != "" {
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil && u.Path != "" {
			p = u.Path
		}
	}
	if p == "" || strings.HasSuffix(p, "/") {
		return "./assets/"
	}
	// The page is at ".../name": its assets are at ".../name/assets/".
	return "./" + url.PathEscape(path.Base(p)) + "/assets/"
}

type pageData struct {
	Endpoint     string
	DefaultQuery string
	ReactJS      template.URL
	ReactDOMJS   template.URL
	GraphiQLJS   template.URL
	GraphiQLCS   template.URL
}

// ExampleQuery is what a new tab of GraphiQL holds: a query that answers on
// the demo data (serve --demo), with comments that say how to run it and
// how to watch events arrive. The README shows the same query.
const ExampleQuery = `# Welcome to fleetgraph's GraphiQL. Paste an admin key into the "API key"
# box above (serve --demo prints one), then run this query with the
# run button or Ctrl-Enter. The Docs button on the left lists every field.
#
# The fleet: each probe with its latest measurement and system status,
# and the fleet's health (warning and critical probes with their reasons).
query Fleet {
  clientsConnection(first: 12) {
    totalCount
    edges {
      node {
        label
        uuid
        lastSeenAt
        measurements(first: 1) {
          edges { node { id document } }
        }
        latestSystemStatusRecord { cpuAveragePercent }
      }
    }
  }
  fleetHealth {
    clientLabel
    state
    reasons { metric percent severity }
  }
}

# Live events, streamed as they happen (server-sent events): run this
# one (choose Events with the run button), then register a probe or
# resolve an anomaly, and each event appears in the response pane.
subscription Events {
  events { type timestamp data }
}
`

// pageTemplate is the GraphiQL page. It must not refer to anything outside
// the server: every script and stylesheet comes from the assets handler, and
// GraphiQL's stylesheet carries its fonts as data: URLs.
var pageTemplate = template.Must(template.New("graphiql").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>FleetGraph · GraphiQL</title>
<link rel="stylesheet" href="{{.GraphiQLCS}}">
<style>
  html, body { height: 100%; margin: 0; }
  body { display: flex; flex-direction: column; }
  #fg-auth {
    display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem;
    padding: 0.4rem 0.75rem; margin: 0;
    font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif;
    color: hsl(219, 28%, 32%); background: hsl(219, 28%, 97%);
    border-bottom: 1px solid hsla(219, 28%, 32%, 0.15);
  }
  #fg-auth label { font-weight: 600; }
  #fg-auth input {
    flex: 0 1 26rem; min-width: 12rem; padding: 0.25rem 0.45rem;
    font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
    color: inherit; background: hsl(219, 28%, 100%);
    border: 1px solid hsla(219, 28%, 32%, 0.35); border-radius: 4px;
  }
  #fg-auth button {
    padding: 0.25rem 0.6rem; font: inherit; color: inherit; cursor: pointer;
    background: transparent; border: 1px solid hsla(219, 28%, 32%, 0.35); border-radius: 4px;
  }
  #fg-auth-status { opacity: 0.75; }
  #fg-auth-status.fg-rejected { opacity: 1; color: hsl(0, 70%, 45%); font-weight: 600; }
  .fg-docs-hint { font-weight: normal; margin: 0.75rem 0 0; }
  #graphiql { flex: 1; min-height: 0; }
  #graphiql > .fg-message {
    height: 100%; display: flex; align-items: center; justify-content: center;
    font: 1.25rem system-ui, sans-serif; padding: 1rem; text-align: center;
  }
  @media (prefers-color-scheme: dark) {
    body:not(.graphiql-light) #fg-auth { color: hsl(219, 29%, 78%); background: hsl(219, 29%, 14%); border-bottom-color: hsla(219, 29%, 78%, 0.15); }
    body:not(.graphiql-light) #fg-auth input { background: hsl(219, 29%, 18%); }
    body:not(.graphiql-light) #fg-auth input, body:not(.graphiql-light) #fg-auth button { border-color: hsla(219, 29%, 78%, 0.35); }
  }
  body.graphiql-dark #fg-auth { color: hsl(219, 29%, 78%); background: hsl(219, 29%, 14%); border-bottom-color: hsla(219, 29%, 78%, 0.15); }
  body.graphiql-dark #fg-auth input { background: hsl(219, 29%, 18%); }
  body.graphiql-dark #fg-auth input, body.graphiql-dark #fg-auth button { border-color: hsla(219, 29%, 78%, 0.35); }
</style>
</head>
<body>
<form id="fg-auth" autocomplete="off">
  <label for="fg-api-key">API key</label>
  <input id="fg-api-key" name="fg-api-key" type="password" spellcheck="false"
         placeholder="Paste your API key (sent as X-API-KEY)">
  <button id="fg-api-key-apply" type="submit">Apply</button>
  <button id="fg-api-key-show" type="button">Show</button>
  <button id="fg-api-key-clear" type="button">Clear</button>
  <span id="fg-auth-status" role="status"></span>
</form>
<div id="graphiql"><div class="fg-message">Loading…</div></div>
<noscript>GraphiQL needs JavaScript.</noscript>
<script src="{{.ReactJS}}"></script>
<script src="{{.ReactDOMJS}}"></script>
<script src="{{.GraphiQLJS}}"></script>
<script>
(function () {
  'use strict';

  var endpoint = {{.Endpoint}};
  var storageKey = 'fleetgraph:graphiql:api-key';

  var form = document.getElementById('fg-auth');
  var input = document.getElementById('fg-api-key');
  var status = document.getElementById('fg-auth-status');
  var container = document.getElementById('graphiql');

  function loadKey() {
    try { return window.localStorage.getItem(storageKey) || ''; } catch (e) { return ''; }
  }
  function storeKey(key) {
    try {
      if (key) { window.localStorage.setItem(storageKey, key); } else { window.localStorage.removeItem(storageKey); }
    } catch (e) { /* storage unavailable: the key lasts for this page only */ }
  }
  function currentKey() { return input.value.trim(); }
  var howToGetAKey = 'Get one with: go run ./cmd/fleetgraph bootstrap --data-owner acme --email you@example.com ' +
    '(or start the server with --demo) and paste its admin key here.';
  // showStatus tells what happens to the key; answer, when given, is the
  // server's verdict on the last request that carried it.
  var lastRejected = false;
  function showStatus(answer) {
    // Without a new answer, the last one stands while its key is the
    // current one: pressing Apply again (or the change event and the
    // submit of one click) must not clobber a verdict that came between.
    if (!answer && lastAnswer && lastAnswer.key === currentKey()) { answer = lastAnswer; }
    status.classList.toggle('fg-rejected', !!(answer && answer.rejected));
    if (!currentKey()) {
      status.textContent = 'No key: requests are sent without X-API-KEY, and the server needs one. ' + howToGetAKey;
    } else if (answer && answer.rejected) {
      status.textContent = 'Rejected (HTTP ' + answer.status + '): ' +
        String(answer.message).replace(/\.?$/, '. ') + howToGetAKey;
    } else {
      status.textContent = (answer ? 'Accepted; sent' : 'Sent') + ' as X-API-KEY; saved in this browser.';
    }
  }
  // showAnswer shows the verdict on a request sent with key, unless the
  // key has changed since.
  var lastAnswer = null;
  function showAnswer(key, httpStatus, body) {
    if (key !== currentKey()) { return; }
    var rejected = httpStatus === 401 || httpStatus === 403;
    lastRejected = rejected;
    var message = body && body.errors && body.errors[0] && body.errors[0].message;
    lastAnswer = { key: key, rejected: rejected, status: httpStatus, message: message || 'the key was refused.' };
    showStatus(lastAnswer);
    explainSchemaError();
  }

  // GraphiQL's documentation panel says only "Error fetching schema" when
  // the introspection was refused; say why and how to get a key below it.
  function explainSchemaError() {
    var errors = container.querySelectorAll('.graphiql-doc-explorer-error');
    for (var i = 0; i < errors.length; i++) {
      var el = errors[i];
      if (!/Error fetching schema/.test(el.textContent)) { continue; }
      var hint = el.querySelector('.fg-docs-hint');
      if (!hint) {
        hint = document.createElement('p');
        hint.className = 'fg-docs-hint';
        el.appendChild(hint);
      }
      var why;
      if (!currentKey()) {
        why = 'The schema needs an API key: paste one into the "API key" box above and press Apply. ';
      } else if (lastAnswer && lastAnswer.rejected) {
        why = 'The server rejected the API key (HTTP ' + lastAnswer.status + '): ' +
          String(lastAnswer.message).replace(/\.?$/, '. ');
      } else {
        why = 'Check the server and the API key above. ';
      }
      if (hint.textContent !== why + howToGetAKey) { hint.textContent = why + howToGetAKey; }
    }
  }
  new MutationObserver(explainSchemaError).observe(container, { childList: true, subtree: true });

  // GraphiQL runs its first introspection before its header editor exists,
  // so it passes no headers then; use what the editor persisted last time.
  function persistedEditorHeaders() {
    try {
      var saved = JSON.parse(window.localStorage.getItem('graphiql:headers') || 'null');
      return saved && typeof saved === 'object' && !Array.isArray(saved) ? saved : null;
    } catch (e) { return null; }
  }

  function errorResult(message) {
    return { errors: [{ message: message }] };
  }

  // Each call returns a new fetcher: GraphiQL re-runs introspection whenever
  // the fetcher prop changes, which is how a newly entered key takes effect
  // for the schema. Queries always read the key as it is now.
  function makeFetcher() {
    return function (params, opts) {
      if (operationType(params.query, params.operationName) === 'subscription') {
        return subscribe(params, opts);
      }
      return send(params, opts);
    };
  }

  // requestHeaders are the headers of a request: the key, then the
  // header editor's (which win on a clash); a string when one is invalid.
  function requestHeaders(opts, accept) {
    var headers = new Headers({ 'Content-Type': 'application/json', 'Accept': accept });
    var key = currentKey();
    if (key) { headers.set('X-API-KEY', key); }
    var extra = (opts && opts.headers) || persistedEditorHeaders();
    if (extra && typeof extra === 'object') {
      for (var name in extra) {
        if (!Object.prototype.hasOwnProperty.call(extra, name)) { continue; }
        var value = extra[name];
        if (value === undefined || value === null) { continue; }
        try {
          headers.set(name, typeof value === 'string' ? value : JSON.stringify(value));
        } catch (e) {
          return 'Invalid header ' + JSON.stringify(name) + ': ' + e.message;
        }
      }
    }
    return headers;
  }

  // operationType is the type of the operation params run: the one named
  // name, else the document's first (a query when it cannot tell).
  function operationType(query, name) {
    var src = String(query || '').replace(/"""[\s\S]*?"""/g, '""').replace(/"(?:[^"\\\n]|\\.)*"/g, '""')
      .replace(/#[^\n\r]*/g, '');
    var depth = 0, inFragment = false;
    for (var i = 0; i < src.length; i++) {
      var c = src[i];
      if (c === '{') {
        if (depth === 0 && !inFragment && !name) { return 'query'; }
        depth++;
        continue;
      }
      if (c === '}') {
        depth--;
        if (depth === 0) { inFragment = false; }
        continue;
      }
      if (depth !== 0 || !/[a-z]/.test(c) || (i > 0 && /[_0-9A-Za-z]/.test(src[i - 1]))) { continue; }
      var m = /^(query|mutation|subscription|fragment)(?![_0-9A-Za-z])\s*([_A-Za-z][_0-9A-Za-z]*)?/.exec(src.slice(i));
      if (!m) { continue; }
      if (m[1] === 'fragment') {
        inFragment = true;
      } else if (!name || m[2] === name) {
        return m[1];
      }
      i += m[0].length - 1;
    }
    return 'query';
  }

  // subscribe runs a subscription over server-sent events (POST with
  // Accept: text/event-stream) and yields each event's result as it
  // arrives, until the server completes the stream or GraphiQL stops it.
  async function* subscribe(params, opts) {
    var headers = requestHeaders(opts, 'text/event-stream');
    if (typeof headers === 'string') { yield errorResult(headers); return; }
    var key = currentKey();
    var abort = new AbortController();
    var response;
    try {
      response = await fetch(endpoint, {
        method: 'POST', headers: headers, body: JSON.stringify(params),
        credentials: 'same-origin', signal: abort.signal
      });
    } catch (e) {
      yield errorResult('Request to ' + endpoint + ' failed: ' + e.message);
      return;
    }
    if (!/text\/event-stream/.test(response.headers.get('Content-Type') || '')) {
      yield await answerOf(key, response);
      return;
    }
    showAnswer(key, response.status, {});
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffered = '';
    try {
      for (;;) {
        var chunk = await reader.read();
        if (chunk.done) { return; }
        buffered += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n');
        var end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          var block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          var type = 'message', data = [];
          block.split('\n').forEach(function (line) {
            var colon = line.indexOf(':');
            var field = colon < 0 ? line : line.slice(0, colon);
            var value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') { type = value; } else if (field === 'data') { data.push(value); }
          });
          if (type === 'complete') { return; }
          if (type === 'next' && data.length > 0) { yield JSON.parse(data.join('\n')); }
        }
      }
    } finally {
      abort.abort();
    }
  }

  // answerOf reads a JSON answer, telling the status line what the server
  // made of the key.
  async function answerOf(key, response) {
    var text = await response.text();
    try {
      var body = JSON.parse(text);
      showAnswer(key, response.status, body);
      return body;
    } catch (e) {
      return errorResult('HTTP ' + response.status + ' ' + response.statusText +
        (text ? ': ' + text.slice(0, 2000) : ''));
    }
  }

  // send runs a query or mutation: one POST, one JSON answer.
  async function send(params, opts) {
    var headers = requestHeaders(opts, 'application/json');
    if (typeof headers === 'string') { return errorResult(headers); }
    var key = currentKey();
    var response;
    try {
      response = await fetch(endpoint, {
        method: 'POST', headers: headers, body: JSON.stringify(params), credentials: 'same-origin'
      });
    } catch (e) {
      return errorResult('Request to ' + endpoint + ' failed: ' + e.message);
    }
    return answerOf(key, response);
  }

  input.value = loadKey();
  showStatus();

  if (typeof window.React === 'undefined' || typeof window.ReactDOM === 'undefined' ||
      typeof window.GraphiQL === 'undefined') {
    container.firstElementChild.textContent =
      'GraphiQL failed to load its scripts; check the server logs and graphiql/build.sh.';
    return;
  }

  var root = window.ReactDOM.createRoot(container);
  var renderedKey = null;
  var mounts = 0;
  // render shows GraphiQL with a fetcher for the current key. After a
  // rejection it mounts GraphiQL afresh, which drops the rejected answer
  // from the response pane (GraphiQL keeps the tabs' queries in
  // localStorage, not their responses).
  function render() {
    renderedKey = currentKey();
    if (lastRejected) { mounts++; lastRejected = false; }
    root.render(window.React.createElement(window.GraphiQL, {
      key: 'graphiql-' + mounts,
      fetcher: makeFetcher(),
      defaultQuery: {{.DefaultQuery}},
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: true,
      inputValueDeprecation: true
    }));
  }
  function apply() {
    storeKey(currentKey());
    if (currentKey() !== renderedKey) { render(); }
    showStatus();
  }

  input.addEventListener('input', function () { storeKey(currentKey()); showStatus(); });
  input.addEventListener('change', apply);
  form.addEventListener('submit', function (event) { event.preventDefault(); apply(); });
  document.getElementById('fg-api-key-show').addEventListener('click', function (event) {
    var hidden = input.type === 'password';
    input.type = hidden ? 'text' : 'password';
    event.currentTarget.textContent = hidden ? 'Hide' : 'Show';
  });
  document.getElementById('fg-api-key-clear').addEventListener('click', function () {
    input.value = '';
    apply();
    input.focus();
  });

  render();
})();
</script>
</body>
</html>
`))
