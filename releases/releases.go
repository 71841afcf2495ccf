// Package releases is the release catalogue behind GET /software/downloads:
// the software the operator offers (automator, lab, configuration), read
// from the JSON file named by FLEETGRAPH_RELEASES when the server starts and
// answered per data owner, whose name goes into the download and extract
// commands. A file that does not parse or names something impossible stops
// the server with a message saying what and where.
package releases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/fleetgraph/fleetgraph/model"
)

// ComponentIDs are the components the spec knows.
var ComponentIDs = []string{"automator", "lab", "configuration"}

// MaxFileBytes bounds the catalogue file.
const MaxFileBytes = 4 << 20

// Catalogue is a checked release catalogue. The zero value (and nil) is the
// empty catalogue: no provider, no components.
type Catalogue struct {
	file fileCatalogue
}

// fileCatalogue is the file's shape.
type fileCatalogue struct {
	Provider   string          `json:"provider"`
	Components []fileComponent `json:"components"`
}

type fileComponent struct {
	ID              string        `json:"id"`
	Label           string        `json:"label"`
	Latest          string        `json:"latest"`
	LatestURL       string        `json:"latest_url"`
	DownloadCommand string        `json:"download_command"`
	ExtractCommand  string        `json:"extract_command"`
	Versions        []fileVersion `json:"versions"`
}

type fileVersion struct {
	Version  string `json:"version"`
	Filename string `json:"filename"`
	URL      string `json:"url"`
}

// Default command templates; the extract command depends on the file's
// extension.
const (
	DefaultDownloadCommand = "curl -fL --create-dirs -o {customer_slug}/{filename} {resolved_url}"
	tarExtractCommand      = "tar -xzf {customer_slug}/{filename} -C {customer_slug}"
	zipExtractCommand      = "unzip -o {customer_slug}/{filename} -d {customer_slug}"
)

// Placeholders of URLs and commands. In commands every value is quoted for
// a POSIX shell where it needs it; in URLs they are path-escaped.
var (
	commandPlaceholders = []string{"customer", "customer_slug", "version", "filename", "url", "resolved_url"}
	urlPlaceholders     = []string{"customer_slug", "version", "filename"}
	placeholder         = regexp.MustCompile(`\{[^{}]*\}`)
)

// Load reads and checks the catalogue file; an empty path is the empty
// catalogue.
func Load(path string) (*Catalogue, error) {
	if strings.TrimSpace(path) == "" {
		return &Catalogue{}, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("release catalogue (FLEETGRAPH_RELEASES): %w", err)
	}
	c, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("release catalogue %s (FLEETGRAPH_RELEASES): %w", path, err)
	}
	return c, nil
}

// Parse checks a catalogue document.
func Parse(raw []byte) (*Catalogue, error) {
	if len(raw) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f fileCatalogue
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a valid catalogue: %w (expected {\"provider\": ..., \"components\": [{\"id\", \"label\", \"versions\": [{\"version\", \"filename\", \"url\"}]}]})", err)
	}
	if dec.More() {
		return nil, errors.New("not a valid catalogue: unexpected data after the JSON object")
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &Catalogue{file: f}, nil
}

func (f *fileCatalogue) check() error {
	if strings.TrimSpace(f.Provider) == "" {
		return errors.New(`"provider" is required`)
	}
	seen := map[string]bool{}
	for i := range f.Components {
		c := &f.Components[i]
		where := fmt.Sprintf("components[%d]", i)
		if !known(c.ID) {
			return fmt.Errorf("%s: id %q must be one of %s", where, c.ID, strings.Join(ComponentIDs, ", "))
		}
		where = fmt.Sprintf("component %q", c.ID)
		if seen[c.ID] {
			return fmt.Errorf("%s is listed twice", where)
		}
		seen[c.ID] = true
		if strings.TrimSpace(c.Label) == "" {
			return fmt.Errorf(`%s: "label" is required`, where)
		}
		if err := c.check(where); err != nil {
			return err
		}
	}
	return nil
}

func (c *fileComponent) check(where string) error {
	versions := map[string]bool{}
	for i, v := range c.Versions {
		vw := fmt.Sprintf("%s: versions[%d]", where, i)
		if strings.TrimSpace(v.Version) == "" || strings.TrimSpace(v.Filename) == "" || strings.TrimSpace(v.URL) == "" {
			return fmt.Errorf(`%s: "version", "filename" and "url" are required`, vw)
		}
		if strings.ContainsAny(v.Filename, `/\`) {
			return fmt.Errorf("%s: filename %q must be a file name, without directories", vw, v.Filename)
		}
		if versions[v.Version] {
			return fmt.Errorf("%s: version %q is listed twice", vw, v.Version)
		}
		versions[v.Version] = true
		if err := checkURL(v.URL); err != nil {
			return fmt.Errorf("%s: url: %w", vw, err)
		}
	}
	if c.Latest != "" && !versions[c.Latest] {
		return fmt.Errorf("%s: latest %q is none of its versions", where, c.Latest)
	}
	if c.LatestURL != "" {
		if len(c.Versions) == 0 {
			return fmt.Errorf("%s: latest_url needs a version", where)
		}
		if err := checkURL(c.LatestURL); err != nil {
			return fmt.Errorf("%s: latest_url: %w", where, err)
		}
	}
	for name, tmpl := range map[string]string{"download_command": c.DownloadCommand, "extract_command": c.ExtractCommand} {
		if err := checkPlaceholders(tmpl, commandPlaceholders); err != nil {
			return fmt.Errorf("%s: %s: %w", where, name, err)
		}
	}
	if latest := c.latest(); latest != nil && c.ExtractCommand == "" && defaultExtract(latest.Filename) == "" {
		return fmt.Errorf("%s: extract_command is required: the latest file %q is not a .tar.gz, .tgz or .zip archive", where, latest.Filename)
	}
	return nil
}

func known(id string) bool {
	for _, k := range ComponentIDs {
		if id == k {
			return true
		}
	}
	return false
}

// checkURL: an absolute http(s) URL with known placeholders.
func checkURL(raw string) error {
	if err := checkPlaceholders(raw, urlPlaceholders); err != nil {
		return err
	}
	u, err := url.Parse(placeholder.ReplaceAllString(raw, "x"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	return nil
}

func checkPlaceholders(tmpl string, allowed []string) error {
	for _, p := range placeholder.FindAllString(tmpl, -1) {
		name := strings.Trim(p, "{}")
		ok := false
		for _, a := range allowed {
			ok = ok || name == a
		}
		if !ok {
			return fmt.Errorf("unknown placeholder %s (known: {%s})", p, strings.Join(allowed, "}, {"))
		}
	}
	return nil
}

// latest is the version named by "latest", else the first listed.
func (c *fileComponent) latest() *fileVersion {
	for i := range c.Versions {
		if c.Versions[i].Version == c.Latest || c.Latest == "" {
			return &c.Versions[i]
		}
	}
	return nil
}

func defaultExtract(filename string) string {
	f := strings.ToLower(filename)
	switch {
	case strings.HasSuffix(f, ".tar.gz"), strings.HasSuffix(f, ".tgz"):
		return tarExtractCommand
	case strings.HasSuffix(f, ".zip"):
		return zipExtractCommand
	}
	return ""
}

// Provider is the catalogue's provider ("" for the empty catalogue).
func (c *Catalogue) Provider() string {
	if c == nil {
		return ""
	}
	return c.file.Provider
}

// For answers the catalogue for a data owner: customer is its name, slug
// its short name.
func (c *Catalogue) For(customer, slug string) model.SoftwareDownloads {
	out := model.SoftwareDownloads{Provider: c.Provider(), Customer: customer, Components: []model.SoftwareComponent{}}
	if c == nil {
		return out
	}
	for _, fc := range c.file.Components {
		comp := model.SoftwareComponent{ID: fc.ID, Label: fc.Label, Versions: make([]model.SoftwareVersion, len(fc.Versions))}
		for i, v := range fc.Versions {
			comp.Versions[i] = model.SoftwareVersion{Version: v.Version, Filename: v.Filename, URL: fillURL(v.URL, slug, v)}
		}
		if lv := fc.latest(); lv != nil {
			resolved := fillURL(lv.URL, slug, *lv)
			link := resolved
			if fc.LatestURL != "" {
				link = fillURL(fc.LatestURL, slug, *lv)
			}
			vals := map[string]string{"customer": customer, "customer_slug": slug, "version": lv.Version,
				"filename": lv.Filename, "url": link, "resolved_url": resolved}
			download, extract := fc.DownloadCommand, fc.ExtractCommand
			if download == "" {
				download = DefaultDownloadCommand
			}
			if extract == "" {
				extract = defaultExtract(lv.Filename)
			}
			comp.Latest = &model.SoftwareLatest{Version: lv.Version, Filename: lv.Filename, URL: link, ResolvedURL: resolved,
				DownloadCommand: fill(download, vals, shellQuote), ExtractCommand: fill(extract, vals, shellQuote)}
		}
		out.Components = append(out.Components, comp)
	}
	return out
}

func fillURL(tmpl, slug string, v fileVersion) string {
	vals := map[string]string{"customer_slug": slug, "version": v.Version, "filename": v.Filename}
	return fill(tmpl, vals, url.PathEscape)
}

// fill replaces the placeholders of tmpl (checked when loading) with their
// values, each passed through quote.
func fill(tmpl string, vals map[string]string, quote func(string) string) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(p string) string {
		return quote(vals[strings.Trim(p, "{}")])
	})
}

// shellSafe are the characters a POSIX shell word may hold unquoted.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
