package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

func TestExpireCommand(t *testing.T) {
	e := apitest.Get(t)
	ctx := context.Background()
	owner := e.NewOwner(t, "expire-cmd").ID
	e.SQL(t, `UPDATE data_owners SET retention_days = 30 WHERE id = $1`, owner)
	client := uuid.NewString()
	var docs []store.Document
	for id, at := range map[string]time.Time{"fresh": time.Now().Add(-time.Hour), "stale": time.Now().AddDate(0, 0, -60)} {
		d, err := store.ParseDocument(vocab.KindMeasurement, fmt.Appendf(nil,
			`{"id":%q,"type":"VideoMeasurement","client_uuid":%q,"created_at":%q}`, id, client, at.UTC().Format(time.RFC3339)))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	if _, err := e.Store.InsertDocuments(ctx, owner, docs); err != nil {
		t.Fatal(err)
	}

	t.Run("one pass deletes what is older than the data owner's retention and exits", func(t *testing.T) {
		var out bytes.Buffer
		if err := expire(ctx, []string{"--database-url", e.DatabaseURL, "--data-dir", t.TempDir()}, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "documents deleted: 1\n") {
			t.Errorf("output %q", out.String())
		}
		if n := countDocs(t, owner, vocab.KindMeasurement); n != 1 {
			t.Errorf("%d documents left, want 1 (fresh)", n)
		}
	})
	for _, bad := range []string{"0", "-1", "36501", "ten", "1.5"} {
		t.Run("--retention-days "+bad+" is refused", func(t *testing.T) {
			err := run(ctx, []string{"expire", "--database-url", e.DatabaseURL, "--retention-days", bad})
			if err == nil || !strings.Contains(err.Error(), "--retention-days") {
				t.Errorf("error %v", err)
			}
		})
	}
}
