package server_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/rest"
)

// TestDocsNotServed: docs/admin-api.md's "Not served" section names no path
// the server serves (it said webhooks and AI conversations answered 404
// after both were served: issue 31, item 9).
func TestDocsNotServed(t *testing.T) {
	raw, err := os.ReadFile("../docs/admin-api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "### Not served\n")
	if start < 0 {
		t.Fatal(`docs/admin-api.md has no "### Not served" section: adjust the test`)
	}
	section := doc[start:]
	if end := strings.Index(section[1:], "\n#"); end >= 0 {
		section = section[:end+1]
	}
	for _, m := range regexp.MustCompile("`(/[^`]*?)(?:\\.\\.\\.)?`").FindAllStringSubmatch(section, -1) {
		for _, r := range rest.AdminRoutes {
			if strings.HasPrefix(r.Path, m[1]) {
				t.Errorf("docs/admin-api.md says %s is not served, but %s %s is", m[0], r.Method, r.Path)
			}
		}
	}
	if strings.Contains(section, "404") && !strings.Contains(section, "Nothing") {
		t.Errorf("the section says something answers 404:\n%s", section)
	}
}
