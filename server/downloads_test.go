package server_test

import (
	"net/http"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/releases"
	"github.com/fleetgraph/fleetgraph/resolvers"
)

// downloadsCatalogue has a component with a stable latest link and default
// commands, one with its own commands whose latest is not listed first, and
// one without versions.
const downloadsCatalogue = `{
  "provider": "Example Networks",
  "components": [
    {"id": "automator", "label": "Automator",
     "latest_url": "https://dl.example.com/{customer_slug}/automator/latest.tar.gz",
     "versions": [
       {"version": "2.4.1", "filename": "automator-2.4.1.tar.gz", "url": "https://dl.example.com/{customer_slug}/automator/{filename}"},
       {"version": "2.3.0", "filename": "automator-2.3.0.tar.gz", "url": "https://dl.example.com/{customer_slug}/automator/{filename}"}]},
    {"id": "lab", "label": "Lab", "latest": "1.0.0",
     "download_command": "curl -fL -H X-Customer:{customer} -o {filename} {resolved_url}",
     "extract_command": "sudo dpkg -i {filename}",
     "versions": [
       {"version": "1.1.0-beta", "filename": "lab_1.1.0.deb", "url": "https://dl.example.com/lab/lab_1.1.0.deb"},
       {"version": "1.0.0", "filename": "lab_1.0.0.deb", "url": "https://dl.example.com/lab/lab_1.0.0.deb"}]},
    {"id": "configuration", "label": "Configuration", "versions": []}
  ]
}`

// TestSoftwareDownloads: the spec's shape and nothing else, with the data
// owner's name in the commands; an empty catalogue when none is configured.
func TestSoftwareDownloads(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "downloads")
	e.SQL(t, `UPDATE data_owners SET name = 'Acme''s Probes' WHERE id = $1`, o.ID)

	t.Run("no catalogue configured", func(t *testing.T) {
		r := e.Admin(t, http.MethodGet, "/software/downloads", o.Key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		apitest.SameJSON(t, "downloads", r.Raw, `{"provider": "", "customer": "Acme's Probes", "components": []}`)
	})

	t.Run("a catalogue", func(t *testing.T) {
		cat, err := releases.Parse([]byte(downloadsCatalogue))
		if err != nil {
			t.Fatal(err)
		}
		base := e.StartServerWith(t, func(r *resolvers.Resolver) { r.Releases = cat })
		r := apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/software/downloads", o.Key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		slug := o.Slug
		apitest.SameJSON(t, "downloads", r.Raw, `{
		  "provider": "Example Networks", "customer": "Acme's Probes",
		  "components": [
		    {"id": "automator", "label": "Automator",
		     "versions": [
		       {"version": "2.4.1", "filename": "automator-2.4.1.tar.gz", "url": "https://dl.example.com/`+slug+`/automator/automator-2.4.1.tar.gz"},
		       {"version": "2.3.0", "filename": "automator-2.3.0.tar.gz", "url": "https://dl.example.com/`+slug+`/automator/automator-2.3.0.tar.gz"}],
		     "latest": {"version": "2.4.1", "filename": "automator-2.4.1.tar.gz",
		       "url": "https://dl.example.com/`+slug+`/automator/latest.tar.gz",
		       "resolved_url": "https://dl.example.com/`+slug+`/automator/automator-2.4.1.tar.gz",
		       "download_command": "curl -fL --create-dirs -o `+slug+`/automator-2.4.1.tar.gz https://dl.example.com/`+slug+`/automator/automator-2.4.1.tar.gz",
		       "extract_command": "tar -xzf `+slug+`/automator-2.4.1.tar.gz -C `+slug+`"}},
		    {"id": "lab", "label": "Lab",
		     "versions": [
		       {"version": "1.1.0-beta", "filename": "lab_1.1.0.deb", "url": "https://dl.example.com/lab/lab_1.1.0.deb"},
		       {"version": "1.0.0", "filename": "lab_1.0.0.deb", "url": "https://dl.example.com/lab/lab_1.0.0.deb"}],
		     "latest": {"version": "1.0.0", "filename": "lab_1.0.0.deb",
		       "url": "https://dl.example.com/lab/lab_1.0.0.deb", "resolved_url": "https://dl.example.com/lab/lab_1.0.0.deb",
		       "download_command": "curl -fL -H X-Customer:'Acme'\\''s Probes' -o lab_1.0.0.deb https://dl.example.com/lab/lab_1.0.0.deb",
		       "extract_command": "sudo dpkg -i lab_1.0.0.deb"}},
		    {"id": "configuration", "label": "Configuration", "versions": [], "latest": null}
		  ]}`)

		// GraphQL answers the same catalogue.
		g := apitest.DoAt(t, base, http.MethodPost, "/graphql", o.Key, map[string]any{
			"query": `{ softwareDownloads { customer components { id latest { resolvedUrl } } } }`})
		apitest.WantStatus(t, g, http.StatusOK)
		apitest.SameJSON(t, "graphql", g.Raw, `{"data": {"softwareDownloads": {"customer": "Acme's Probes", "components": [
			{"id": "automator", "latest": {"resolvedUrl": "https://dl.example.com/`+slug+`/automator/automator-2.4.1.tar.gz"}},
			{"id": "lab", "latest": {"resolvedUrl": "https://dl.example.com/lab/lab_1.0.0.deb"}},
			{"id": "configuration", "latest": null}]}}}`)

		// Another data owner sees its own name and slug.
		other := e.NewOwner(t, "downloads_other")
		r = apitest.DoAt(t, base, http.MethodGet, "/client_admin_api/v1/software/downloads", other.Key, nil)
		if c := r.Obj(t)["customer"]; c != other.Slug {
			t.Errorf("customer = %v, want %s", c, other.Slug)
		}
	})

	apitest.Want400(t, e.Admin(t, http.MethodGet, "/software/downloads?component=lab", o.Key, nil), "unknown query parameter component")
}
