// Package dashboard serves fleetgraph's web dashboard: a single-page app
// (Preact, urql with graphql-ws, uPlot; sources in src/) that Vite builds
// into dist/ and that is compiled into the binary with //go:embed, so the
// page needs nothing but the server's own origin.
//
// Build the app once (and again after changing src/ or package.json), then
// rebuild the Go binary:
//
//	bash dashboard/build.sh
//
// Without that step the package still compiles (dist/.keep is always
// embedded) and the page answers 503 with instructions.
//
// The app talks to the public GraphQL API only (POST /graphql, and
// graphql-transport-ws on GET /graphql for subscriptions) with the admin API
// key its user enters; see docs/dashboard.md.
package dashboard

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/fleetgraph/fleetgraph/graphiql"
)

//go:embed all:dist
var embedded embed.FS

// AssetsPrefix is the URL path under which the page loads its scripts and
// stylesheets (Vite's build.assetsDir, see vite.config.ts).
const AssetsPrefix = "/assets/"

// ContentSecurityPolicy is sent with the page: scripts, styles and
// connections of the server's own origin only (the GraphQL endpoint and its
// WebSocket), no inline script, no frames, no plugins.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const notBuiltMessage = "The dashboard is not available: its browser app was not built into this binary.\n" +
	"Run bash dashboard/build.sh (or `make assets`), then rebuild the server.\n"

// file is one built file, with its gzipped form when that is smaller.
type file struct {
	data, gzipped []byte
	contentType   string
}

var (
	loadOnce sync.Once
	files    map[string]*file // by path relative to dist/
)

// load reads dist/ once: every regular, non-hidden file, gzipped once.
func load() map[string]*file {
	loadOnce.Do(func() {
		files = map[string]*file{}
		_ = fs.WalkDir(embedded, "dist", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			data, err := fs.ReadFile(embedded, p)
			if err != nil || len(data) == 0 {
				return nil
			}
			f := &file{data: data, contentType: graphiql.ContentType(p)}
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(data)
			_ = zw.Close()
			if buf.Len() < len(data) {
				f.gzipped = buf.Bytes()
			}
			files[strings.TrimPrefix(p, "dist/")] = f
			return nil
		})
	})
	return files
}

// Built reports whether the app is built into this binary (dist/index.html).
func Built() bool { return load()["index.html"] != nil }

// Page answers GET and HEAD with the app's page (dist/index.html), under
// the Content-Security-Policy above; 503 with instructions while the app is
// not built.
func Page() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := load()["index.html"]
		if f == nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, notBuiltMessage)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache") // the page names the hashed assets of this build
		serve(w, r, f)
	})
}

// Assets answers GET and HEAD of AssetsPrefix + a built file's name; the
// names carry a content hash (Vite's), so they may be cached for a year.
// Unknown names are 404.
func Assets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		f := load()[name]
		if f == nil || !strings.HasPrefix(r.URL.Path, AssetsPrefix) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		serve(w, r, f)
	})
}

func serve(w http.ResponseWriter, r *http.Request, f *file) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Accept-Encoding")
	body := f.data
	if f.gzipped != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = f.gzipped
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}
