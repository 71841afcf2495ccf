package graphiql

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// fakeContent is the content of the files in fakeDist.
var fakeContent = map[string]string{
	reactJS:    "/* fake react */ window.React = {};",
	reactDOMJS: "/* fake react-dom */ window.ReactDOM = {};",
	graphiqlJS: "/* fake graphiql */ window.GraphiQL = function () {};",
	graphiqlCS: "/* fake graphiql css */ .graphiql-container { display: flex; }",
}

// fakeDist is a built dist/ directory with small stand-ins for the bundles.
func fakeDist() fstest.MapFS {
	m := fstest.MapFS{
		".keep":           {Data: nil},
		".secret":         {Data: []byte("not for serving")},
		"graphiql.js.map": {Data: []byte(`{"version":3}`)},
	}
	for name, data := range fakeContent {
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

var attrURL = regexp.MustCompile(`\b(?:src|href)="([^"]*)"`)

// referencedURLs returns the src and href attribute values of an HTML page.
func referencedURLs(page string) []string {
	var urls []string
	for _, m := range attrURL.FindAllStringSubmatch(page, -1) {
		urls = append(urls, m[1])
	}
	return urls
}

func get(t *testing.T, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestPageIsSelfContained(t *testing.T) {
	h := newPage(fakeDist(), "/graphql", "/graphiql/assets/")
	rec := get(t, h, http.MethodGet, "/graphql", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200; body: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache", cc)
	}
	body := rec.Body.String()
	for _, external := range []string{"http://", "https://", "//cdn", "unpkg", "jsdelivr", "fonts.googleapis"} {
		if strings.Contains(body, external) {
			t.Errorf("page contains %q", external)
		}
	}

	var names []string
	for _, u := range referencedURLs(body) {
		name, ok := strings.CutPrefix(u, "/graphiql/assets/")
		if !ok {
			t.Errorf("page references %q, outside /graphiql/assets/", u)
			continue
		}
		name, version, _ := strings.Cut(name, "?v=")
		if len(version) != 16 {
			t.Errorf("%q: version %q, want 16 hex digits", u, version)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	want := slices.Clone(requiredAssets)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("page references assets %q, want %q", names, want)
	}

	for _, s := range []string{
		`var endpoint = "/graphql";`,
		"X-API-KEY",
		"localStorage",
		`id="fg-api-key"`,
		`id="graphiql"`,
		"ReactDOM.createRoot",
		"opts.headers", // headers from GraphiQL's header editor
		"method: 'POST'",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	// The key box comes before the editor.
	if strings.Index(body, `id="fg-api-key"`) > strings.Index(body, `<div id="graphiql"`) {
		t.Error("API key input is not above the GraphiQL container")
	}

	head := get(t, h, http.MethodHead, "/graphql", nil)
	if head.Code != http.StatusOK || head.Body.Len() != 0 {
		t.Errorf("HEAD: status %d, %d body bytes; want 200 and none", head.Code, head.Body.Len())
	}
	if got := get(t, h, http.MethodPost, "/graphql", nil); got.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", got.Code)
	}
}

func TestPageEscapesEndpoint(t *testing.T) {
	const endpoint = `/graphql?a="</script><script>alert(1)</script>`
	rec := get(t, newPage(fakeDist(), endpoint, "/assets/"), http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d", rec.Code)
	}
	body := rec.Body.String()
	if strings.Contains(body, endpoint) || strings.Contains(body, "alert(1)</script>") {
		t.Error("endpoint written into the page unescaped")
	}
	if n := strings.Count(body, "</script>"); n != 4 {
		t.Errorf("page has %d </script>, want 4", n)
	}
}

func TestAssetsServedWithTypesAndCaching(t *testing.T) {
	dist := fakeDist()
	mux := http.NewServeMux()
	mux.Handle("GET /graphql", newPage(dist, "/graphql", "/graphiql/assets"))
	mux.Handle("/graphiql/assets/", newAssets(dist, "/graphiql/assets/"))

	page := get(t, mux, http.MethodGet, "/graphql", nil)
	if page.Code != http.StatusOK {
		t.Fatalf("page status = %d", page.Code)
	}
	urls := referencedURLs(page.Body.String())
	if len(urls) != len(requiredAssets) {
		t.Fatalf("page references %d URLs, want %d: %q", len(urls), len(requiredAssets), urls)
	}
	for _, u := range urls {
		name := strings.TrimPrefix(strings.SplitN(u, "?", 2)[0], "/graphiql/assets/")
		rec := get(t, mux, http.MethodGet, u, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: status %d", u, rec.Code)
			continue
		}
		if got, want := rec.Body.String(), fakeContent[name]; got != want {
			t.Errorf("GET %s: body %q, want %q", u, got, want)
		}
		wantType := "text/javascript; charset=utf-8"
		if strings.HasSuffix(name, ".css") {
			wantType = "text/css; charset=utf-8"
		}
		if ct := rec.Header().Get("Content-Type"); ct != wantType {
			t.Errorf("GET %s: Content-Type %q, want %q", u, ct, wantType)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q", u, cc)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", u)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" {
			t.Errorf("GET %s: no ETag", u)
			continue
		}
		again := get(t, mux, http.MethodGet, u, http.Header{"If-None-Match": {etag}})
		if again.Code != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match: status %d, want 304", u, again.Code)
		}
	}

	// Without the current version the file may be cached but must be
	// revalidated.
	for _, target := range []string{"/graphiql/assets/" + graphiqlJS, "/graphiql/assets/" + graphiqlJS + "?v=stale"} {
		rec := get(t, mux, http.MethodGet, target, nil)
		if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "public, no-cache" {
			t.Errorf("GET %s: status %d, Cache-Control %q; want 200, public, no-cache",
				target, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}

	// Extra non-hidden files are served too, with their own type.
	if rec := get(t, mux, http.MethodGet, "/graphiql/assets/graphiql.js.map", nil); rec.Code != http.StatusOK ||
		rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("source map: status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestAssetsRejectsOtherPaths(t *testing.T) {
	h := newAssets(fakeDist(), "/graphiql/assets/")
	for _, target := range []string{
		"/graphiql/assets/",
		"/graphiql/assets/nope.js",
		"/graphiql/assets/.keep",
		"/graphiql/assets/.secret",
		"/graphiql/assets/sub/" + graphiqlJS,
		"/graphiql/assets/../graphiql.go",
		"/elsewhere/" + graphiqlJS,
	} {
		if rec := get(t, h, http.MethodGet, target, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", target, rec.Code)
		}
	}
	rec := get(t, h, http.MethodPost, "/graphiql/assets/"+graphiqlJS, nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d, Allow %q; want 405, GET, HEAD", rec.Code, rec.Header().Get("Allow"))
	}
	head := get(t, h, http.MethodHead, "/graphiql/assets/"+reactJS, nil)
	if head.Code != http.StatusOK || head.Body.Len() != 0 ||
		head.Header().Get("Content-Length") != strconv.Itoa(len(fakeContent[reactJS])) {
		t.Errorf("HEAD: status %d, %d body bytes, Content-Length %q",
			head.Code, head.Body.Len(), head.Header().Get("Content-Length"))
	}
}

func TestNotBuiltAnswers503(t *testing.T) {
	partial := fakeDist()
	delete(partial, graphiqlJS)
	emptyJS := fakeDist()
	emptyJS[reactJS] = &fstest.MapFile{Data: nil}

	for name, fsys := range map[string]fs.FS{
		"empty fs":          fstest.MapFS{},
		"only .keep":        fstest.MapFS{".keep": {}},
		"graphiql missing":  partial,
		"react.js is empty": emptyJS,
	} {
		t.Run(name, func(t *testing.T) {
			handlers := map[string]http.Handler{
				"page":     newPage(fsys, "/graphql", "/graphiql/assets/"),
				"assets":   newAssets(fsys, "/graphiql/assets/"),
				"combined": newHandler(fsys, "/graphql"),
			}
			for hname, h := range handlers {
				target := "/graphql"
				if hname == "assets" {
					target = "/graphiql/assets/" + reactJS
				}
				rec := get(t, h, http.MethodGet, target, nil)
				if rec.Code != http.StatusServiceUnavailable {
					t.Errorf("%s: status %d, want 503", hname, rec.Code)
				}
				if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
					t.Errorf("%s: Content-Type %q", hname, ct)
				}
				if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
					t.Errorf("%s: Cache-Control %q, want no-store", hname, cc)
				}
				body := rec.Body.String()
				if !strings.Contains(body, "graphiql/build.sh") || !strings.Contains(body, "make assets") {
					t.Errorf("%s: body does not say how to build: %q", hname, body)
				}
			}
			head := get(t, handlers["page"], http.MethodHead, "/graphql", nil)
			if head.Code != http.StatusServiceUnavailable || head.Body.Len() != 0 {
				t.Errorf("HEAD: status %d, %d body bytes", head.Code, head.Body.Len())
			}
		})
	}

	rec := get(t, newPage(partial, "/graphql", "/a/"), http.MethodGet, "/graphql", nil)
	if !strings.Contains(rec.Body.String(), "Missing from graphiql/dist/: "+graphiqlJS+"\n") {
		t.Errorf("503 body does not name the missing file: %q", rec.Body)
	}
}

// TestCombinedHandler mounts Handler-style handlers on a real server in the
// ways the documentation suggests and follows the page's relative URLs.
func TestCombinedHandler(t *testing.T) {
	dist := fakeDist()
	mux := http.NewServeMux()
	mux.Handle("/graphiql/", newHandler(dist, "/graphql"))
	mux.Handle("/ide/", http.StripPrefix("/ide", newHandler(dist, "/graphql")))
	// Like chi's Mount: both the bare path and the subtree reach the handler.
	noSlash := newHandler(dist, "/graphql")
	mux.Handle("/bare", noSlash)
	mux.Handle("/bare/", noSlash)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, pagePath := range []string{"/graphiql/", "/ide/", "/bare", "/bare/"} {
		pageURL, _ := url.Parse(srv.URL + pagePath)
		resp, err := http.Get(pageURL.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d", pagePath, resp.StatusCode)
			continue
		}
		urls := referencedURLs(string(body))
		if len(urls) != len(requiredAssets) {
			t.Errorf("GET %s: %d asset URLs, want %d", pagePath, len(urls), len(requiredAssets))
		}
		for _, ref := range urls {
			if strings.HasPrefix(ref, "/") || strings.Contains(ref, "//") {
				t.Errorf("GET %s: asset URL %q is not relative", pagePath, ref)
			}
			u, err := pageURL.Parse(ref)
			if err != nil {
				t.Errorf("GET %s: bad asset URL %q: %v", pagePath, ref, err)
				continue
			}
			wantPrefix := strings.TrimSuffix(pagePath, "/") + "/assets/"
			if !strings.HasPrefix(u.Path, wantPrefix) {
				t.Errorf("GET %s: asset %q resolves to %s, want under %s", pagePath, ref, u.Path, wantPrefix)
			}
			resp, err := http.Get(u.String())
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			name := strings.TrimPrefix(u.Path, wantPrefix)
			if resp.StatusCode != http.StatusOK || string(data) != fakeContent[name] {
				t.Errorf("GET %s: status %d, body %q", u, resp.StatusCode, data)
			}
		}
	}
}

func TestConstructorsRejectEmptyArguments(t *testing.T) {
	for name, f := range map[string]func(){
		"page endpoint": func() { newPage(fakeDist(), "", "/a/") },
		"page prefix":   func() { newPage(fakeDist(), "/graphql", "") },
		"assets prefix": func() { newAssets(fakeDist(), "") },
		"handler":       func() { newHandler(fakeDist(), "") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// upstreamSRI are the Subresource Integrity hashes that gqlgen v0.17.95's
// playground uses for the CDN copies of the same files; build.sh checks them
// too.
var upstreamSRI = map[string]string{
	reactJS:    "sha256-S0lp+k7zWUMk2ixteM6HZvu8L9Eh//OVrt+ZfbCpmgY=",
	reactDOMJS: "sha256-IXWO0ITNDjfnNXIu5POVfqlgYoop36bDzhodR6LW5Pc=",
	graphiqlJS: "sha256-hnImuor1znlJkD/FOTL3jayfS/xsyNoP04abi8bFJWs=",
	graphiqlCS: "sha256-MEh+B2NdMSpj9kexQNN3QKc8UzMrCXW/Sx/phcpuyIU=",
}

// TestEmbeddedDist checks the exported handlers on what this binary really
// embeds: either the complete, verified bundle (after build.sh) or nothing
// but dist/.keep, in which case the page must explain itself with a 503.
func TestEmbeddedDist(t *testing.T) {
	dist := distFS()
	var present []string
	for _, name := range requiredAssets {
		if fi, err := fs.Stat(dist, name); err == nil && fi.Size() > 0 {
			present = append(present, name)
		}
	}
	if _, err := fs.Stat(dist, ".keep"); err != nil {
		t.Errorf("dist/.keep is not embedded: %v", err)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /graphql", Page("/graphql", "/graphiql/assets/"))
	mux.Handle("/graphiql/assets/", Assets("/graphiql/assets/"))
	page := get(t, mux, http.MethodGet, "/graphql", nil)

	switch len(present) {
	case 0:
		t.Log("dist/ not built: checking the 503 answer")
		if page.Code != http.StatusServiceUnavailable || !strings.Contains(page.Body.String(), "graphiql/build.sh") {
			t.Errorf("page without assets: status %d, body %q", page.Code, page.Body)
		}
	case len(requiredAssets):
		t.Log("dist/ built: checking the real bundles")
		if page.Code != http.StatusOK {
			t.Fatalf("page: status %d, body %q", page.Code, page.Body)
		}
		for _, u := range referencedURLs(page.Body.String()) {
			name := strings.TrimPrefix(strings.SplitN(u, "?", 2)[0], "/graphiql/assets/")
			rec := get(t, mux, http.MethodGet, u, nil)
			if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
				t.Errorf("GET %s: status %d, %d bytes", u, rec.Code, rec.Body.Len())
				continue
			}
			sum := sha256.Sum256(rec.Body.Bytes())
			if got := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); got != upstreamSRI[name] {
				t.Errorf("GET %s: %s, want %s", u, got, upstreamSRI[name])
			}
			if ct, want := rec.Header().Get("Content-Type"), ContentType(name); ct != want || !strings.HasPrefix(ct, "text/") {
				t.Errorf("GET %s: Content-Type %q, want %q", u, ct, want)
			}
		}
		js := get(t, mux, http.MethodGet, "/graphiql/assets/"+graphiqlJS, nil).Body.String()
		if !strings.Contains(js, ".GraphiQL=") {
			t.Error("graphiql.min.js does not define the GraphiQL global")
		}
	default:
		t.Errorf("dist/ is partly built (only %q): run graphiql/build.sh", present)
	}
}

// A newcomer without a key reads on the page how to get one.
func TestPageSaysHowToGetAKey(t *testing.T) {
	body := get(t, newPage(fakeDist(), "/graphql", "/graphiql/assets/"), http.MethodGet, "/graphql", nil).Body.String()
	for _, want := range []string{"fleetgraph bootstrap --data-owner", "--demo", "Rejected (HTTP "} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
