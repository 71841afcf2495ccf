package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// fleetgraph analyze refuses bad input with an error that names it, before
// it judges anything.
func TestAnalyzeRefusesBadInput(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "analyze-input")
	db := []string{"--database-url", e.DatabaseURL, "--data-dir", t.TempDir()}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no data owner", nil, "--data-owner is required"},
		{"since not a time", []string{"--data-owner", o.Slug, "--since", "yesterday"}, "--since"},
		{"unknown data owner", append([]string{"--data-owner", "no-such-owner"}, db...), `data owner "no-such-owner" not found`},
		{"unknown rule", append([]string{"--data-owner", o.Slug, "--rule", "no-such-rule"}, db...), `--rule: the data owner has no rule "no-such-rule"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := analyze(context.Background(), c.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("analyze %v = %v, want an error with %q", c.args, err, c.want)
			}
		})
	}
}
