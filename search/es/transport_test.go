package es

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/elastic/go-elasticsearch/v8/esapi"
)

// The low-level transport sends the URL's credentials as basic
// authentication, never in the URL, and keeps the URL's path prefix.
func TestTransportTakesCredentialsAndPathFromTheURL(t *testing.T) {
	var user, pass, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ = r.BasicAuth()
		path = r.URL.Path
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/es/")
	u.User = url.UserPassword("elastic", "s3cret")
	tr, err := newTransport(u)
	if err != nil {
		t.Fatal(err)
	}
	res, err := esapi.InfoRequest{}.Do(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if user != "elastic" || pass != "s3cret" || path != "/es/" {
		t.Errorf("basic auth %q:%q, path %q; want elastic:s3cret on /es/", user, pass, path)
	}
}
