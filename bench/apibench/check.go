package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// compareBytes: the REST answers must be byte for byte the same.
func compareBytes(a, b []byte) error {
	if bytes.Equal(a, b) {
		return nil
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Errorf("bodies differ at byte %d (%d and %d bytes): %q vs %q", i, len(a), len(b), excerpt(a, i), excerpt(b, i))
}

func excerpt(b []byte, i int) []byte {
	lo, hi := max(0, i-80), min(len(b), i+80)
	return b[lo:hi]
}

// compareGraphQL: both GraphQL answers, brought into one shape, must hold
// the same clients with the same groups, key and current contract.
func compareGraphQL(a, b []byte) error {
	fa, err := fleetgraphClients(a)
	if err != nil {
		return fmt.Errorf("fleetgraph answer: %w", err)
	}
	pb, err := postgraphileClients(b)
	if err != nil {
		return fmt.Errorf("postgraphile answer: %w", err)
	}
	if len(fa) == 0 {
		return errors.New("fleetgraph answered no clients")
	}
	if len(fa) != len(pb) {
		return fmt.Errorf("fleetgraph answered %d clients, postgraphile %d", len(fa), len(pb))
	}
	for i := range fa {
		if !reflect.DeepEqual(fa[i], pb[i]) {
			ja, _ := json.Marshal(fa[i])
			jb, _ := json.Marshal(pb[i])
			return fmt.Errorf("client %d differs:\n fleetgraph   %s\n postgraphile %s", i, ja, jb)
		}
	}
	return nil
}

// normClient is the shape both answers are compared in.
type normClient struct {
	ID, UUID, Type, CreatedAt, LastSeenAt string
	Label, ExtraLabel                     *string
	Tags                                  []string
	Key                                   *normKey
	Groups                                []normGroup
	Contract                              *normContract
}

type normKey struct{ ID, Key, Left, ValidFrom string }

type normGroup struct{ ID, Name string }

type normContract struct{ ID, Name, Up, Down, Price, ValidFrom, IspName string }

// gqlClient has the fields both servers name alike.
type gqlClient struct {
	ID         json.Number `json:"id"`
	UUID       string      `json:"uuid"`
	Type       string      `json:"type"`
	Label      *string     `json:"label"`
	ExtraLabel *string     `json:"extraLabel"`
	Tags       []string    `json:"tags"`
	CreatedAt  string      `json:"createdAt"`
	LastSeenAt string      `json:"lastSeenAt"`
}

type gqlKey struct {
	ID                   json.Number `json:"id"`
	RegistrationKey      string      `json:"registrationKey"`
	NumRegistrationsLeft json.Number `json:"numRegistrationsLeft"`
	ValidFrom            string      `json:"validFrom"`
}

type gqlGroup struct {
	ID   json.Number `json:"id"`
	Name string      `json:"name"`
}

type gqlContract struct {
	ID            json.Number  `json:"id"`
	Name          string       `json:"name"`
	UploadSpeed   *json.Number `json:"uploadSpeed"`
	DownloadSpeed *json.Number `json:"downloadSpeed"`
	MonthlyPrice  *json.Number `json:"monthlyPrice"`
	ValidFrom     string       `json:"validFrom"`
}

func (c gqlClient) norm() normClient {
	return normClient{ID: numString(c.ID), UUID: c.UUID, Type: c.Type, CreatedAt: instant(c.CreatedAt),
		LastSeenAt: instant(c.LastSeenAt), Label: c.Label, ExtraLabel: c.ExtraLabel, Tags: c.Tags}
}

func (k *gqlKey) norm() *normKey {
	if k == nil {
		return nil
	}
	return &normKey{ID: numString(k.ID), Key: k.RegistrationKey, Left: numString(k.NumRegistrationsLeft), ValidFrom: instant(k.ValidFrom)}
}

func (c *gqlContract) norm(isp string) *normContract {
	return &normContract{ID: numString(c.ID), Name: c.Name, Up: optNum(c.UploadSpeed), Down: optNum(c.DownloadSpeed),
		Price: optNum(c.MonthlyPrice), ValidFrom: instant(c.ValidFrom), IspName: isp}
}

func normGroups(gs []gqlGroup) []normGroup {
	out := make([]normGroup, len(gs))
	for i, g := range gs {
		out[i] = normGroup{ID: numString(g.ID), Name: g.Name}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// numString writes a number (PostGraphile sends BigInt and BigFloat as
// strings) in one canonical form.
func numString(n json.Number) string {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return "invalid:" + string(n)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func optNum(n *json.Number) string {
	if n == nil {
		return "null"
	}
	return numString(*n)
}

// instant writes a timestamp in UTC (the servers use different offsets).
func instant(s string) string {
	if s == "" {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "invalid:" + s
	}
	return t.UTC().Format(time.RFC3339Nano)
}
