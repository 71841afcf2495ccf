package releases

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadWithoutFileIsTheEmptyCatalogue(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	d := c.For("Acme", "acme")
	if d.Provider != "" || d.Customer != "Acme" || d.Components == nil || len(d.Components) != 0 {
		t.Errorf("empty catalogue = %+v", d)
	}
	var none *Catalogue
	if d := none.For("Acme", "acme"); len(d.Components) != 0 || d.Components == nil {
		t.Errorf("nil catalogue = %+v", d)
	}
}

// TestLoadRefusesBadCatalogues: every mistake stops the server with a
// message naming the file and what is wrong.
func TestLoadRefusesBadCatalogues(t *testing.T) {
	version := `{"version": "1", "filename": "a.tar.gz", "url": "https://x.example/a.tar.gz"}`
	comp := func(extra string) string {
		return `{"provider": "P", "components": [{"id": "automator", "label": "A", ` + extra + `}]}`
	}
	for _, c := range []struct{ name, file, mention string }{
		{"not JSON", `{"provider": `, "not a valid catalogue"},
		{"trailing data", `{"provider": "P"} {}`, "unexpected data"},
		{"unknown field", `{"provider": "P", "compnents": []}`, `unknown field "compnents"`},
		{"no provider", `{"components": []}`, `"provider" is required`},
		{"unknown component", `{"provider": "P", "components": [{"id": "agent", "label": "x"}]}`, `id "agent" must be one of automator, lab, configuration`},
		{"component twice", `{"provider": "P", "components": [{"id": "lab", "label": "x"}, {"id": "lab", "label": "y"}]}`, `component "lab" is listed twice`},
		{"no label", `{"provider": "P", "components": [{"id": "lab"}]}`, `"label" is required`},
		{"version without url", comp(`"versions": [{"version": "1", "filename": "a.tar.gz"}]`), `"url" are required`},
		{"filename with a directory", comp(`"versions": [{"version": "1", "filename": "../a.tar.gz", "url": "https://x.example/a"}]`), "without directories"},
		{"version twice", comp(`"versions": [` + version + `, ` + version + `]`), `version "1" is listed twice`},
		{"relative url", comp(`"versions": [{"version": "1", "filename": "a.tar.gz", "url": "/a.tar.gz"}]`), "not an absolute http or https URL"},
		{"ftp url", comp(`"versions": [{"version": "1", "filename": "a.tar.gz", "url": "ftp://x.example/a.tar.gz"}]`), "not an absolute http or https URL"},
		{"unknown url placeholder", comp(`"versions": [{"version": "1", "filename": "a.tar.gz", "url": "https://x.example/{customer}/a"}]`), "unknown placeholder {customer}"},
		{"latest not listed", comp(`"latest": "2", "versions": [` + version + `]`), `latest "2" is none of its versions`},
		{"unknown command placeholder", comp(`"download_command": "curl {link}", "versions": [` + version + `]`), "download_command: unknown placeholder {link}"},
		{"no extract command for a package", comp(`"versions": [{"version": "1", "filename": "a.deb", "url": "https://x.example/a.deb"}]`), "extract_command is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "releases.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want one naming %s and mentioning %q", err, path, c.mention)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_RELEASES") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"acme":          "acme",
		"a-1.2_3/x:y@z": "a-1.2_3/x:y@z",
		"Acme Probes":   "'Acme Probes'",
		"it's":          `'it'\''s'`,
		"$(rm -rf /)":   "'$(rm -rf /)'",
		"":              "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
