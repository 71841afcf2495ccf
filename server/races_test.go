package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// raceWidth is how many requests each race test sends at once.
const raceWidth = 50

// answer is one racing request's outcome: its HTTP status and, for
// GraphQL, extensions.code ("" when it succeeded).
type answer struct {
	status int
	code   string
	raw    string
}

// race runs n requests at once (do(i) sends the i-th) and returns their
// answers in order.
func race(n int, do func(i int) answer) []answer {
	out := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = do(i)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// wantOnly fails the test for any answer whose code (GraphQL) or status
// (REST) is not among the allowed ones: a race is answered as a race (404,
// 409), never INTERNAL_SERVER_ERROR or a 5xx.
func wantOnly(t *testing.T, what string, answers []answer, codes ...string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, c := range codes {
		allowed[c] = true
	}
	for i, a := range answers {
		key := a.code
		if key == "" {
			key = fmt.Sprint(a.status)
		}
		if a.status >= 500 || !allowed[key] {
			t.Errorf("%s #%d: %d %s: %s (want one of %v)", what, i, a.status, a.code, a.raw, codes)
		}
	}
}

func gqlAnswer(g *apitest.GraphQLResponse) answer {
	return answer{status: g.Status, code: g.Code(), raw: string(g.Raw)}
}

func restAnswer(r *apitest.Response) answer {
	return answer{status: r.Status, raw: string(r.Raw)}
}

// TestRaceKeyCreateCapabilityDelete: registration keys created while their
// capability is deleted answer as created or as not found, never 500.
func TestRaceKeyCreateCapabilityDelete(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "racekeys")
	for round := range 3 {
		capability := o.NewCapability(t, store.CapabilityInput{})
		answers := race(raceWidth, func(i int) answer {
			if i == raceWidth/2 {
				return restAnswer(e.Admin(t, http.MethodDelete, fmt.Sprintf("/capabilities/%d", capability.ID), o.Key, nil))
			}
			return gqlAnswer(e.GraphQL(t, o.Key, `mutation($c: Int!, $k: String!) { registrationKeyCreate(input: {capabilityId: $c, registrationKey: $k}) { id } }`,
				map[string]any{"c": capability.ID, "k": fmt.Sprintf("race-key-%d-%d-%s", round, i, o.Slug)}))
		})
		wantOnly(t, fmt.Sprintf("round %d", round), answers, "200", "NOT_FOUND")
		if answers[raceWidth/2].status != http.StatusOK {
			t.Errorf("round %d: DELETE answered %d %s", round, answers[raceWidth/2].status, answers[raceWidth/2].raw)
		}
	}
}

// TestRaceKeyUpdateCapabilityDelete: registration keys updated while their
// capability (and so they) are deleted answer as updated or not found.
func TestRaceKeyUpdateCapabilityDelete(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "racekeyupd")
	capability := o.NewCapability(t, store.CapabilityInput{})
	keys := make([]int64, raceWidth)
	for i := range keys {
		keys[i] = o.NewRegistrationKey(t, store.RegistrationKeyInput{CapabilityID: capability.ID}).ID
	}
	answers := race(raceWidth, func(i int) answer {
		if i == raceWidth/2 {
			return restAnswer(e.Admin(t, http.MethodDelete, fmt.Sprintf("/capabilities/%d", capability.ID), o.Key, nil))
		}
		return gqlAnswer(e.GraphQL(t, o.Key, `mutation($id: Int!) { registrationKeyUpdate(id: $id, input: {comment: "raced"}) { id } }`,
			map[string]any{"id": keys[i]}))
	})
	wantOnly(t, "update or delete", answers, "200", "NOT_FOUND")
}

// TestRaceIspMergeDelete: ISPs merged into a target that is deleted at the
// same time answer as merged or not found; merges in both directions at
// once (each locks what the other needs) answer as merged, not found or
// a conflict to retry.
func TestRaceIspMergeDelete(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "racemerge")
	target := o.NewISP(t, store.IspInput{})
	sources := make([]int64, raceWidth)
	for i := range sources {
		if i != raceWidth/2 {
			sources[i] = o.NewISP(t, store.IspInput{}).ID
			o.NewContract(t, store.NewContract{IspID: sources[i]})
		}
	}
	answers := race(raceWidth, func(i int) answer {
		if i == raceWidth/2 {
			return restAnswer(e.Admin(t, http.MethodDelete, fmt.Sprintf("/isps/%d", target.ID), o.Key, nil))
		}
		return restAnswer(e.Admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", sources[i]), o.Key,
			map[string]any{"target_id": target.ID}))
	})
	wantOnly(t, "merge or delete", answers, "200", "404")

	a, b := o.NewISP(t, store.IspInput{}), o.NewISP(t, store.IspInput{})
	o.NewContract(t, store.NewContract{IspID: a.ID})
	o.NewContract(t, store.NewContract{IspID: b.ID})
	answers = race(raceWidth, func(i int) answer {
		from, to := a.ID, b.ID
		if i%2 == 1 {
			from, to = to, from
		}
		return restAnswer(e.Admin(t, http.MethodPost, fmt.Sprintf("/isps/%d/merge_into", from), o.Key, map[string]any{"target_id": to}))
	})
	wantOnly(t, "merges both ways", answers, "200", "404", "409")
}

// TestRaceOverrideCreateDelete: an override set while its scope is deleted
// answers the override as set, never a 404 from reading it back.
func TestRaceOverrideCreateDelete(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "raceoverride")
	scope := map[string]any{"subject": "youtube", "measurement_type": "VideoMeasurement", "metric": "stalling", "detection_pass": "spike"}
	answers := race(raceWidth, func(i int) answer {
		if i%2 == 1 {
			return restAnswer(e.Admin(t, http.MethodDelete,
				"/anomaly_detection_overrides?subject=youtube&measurement_type=VideoMeasurement&metric=stalling&detection_pass=spike", o.Key, nil))
		}
		return restAnswer(e.Admin(t, http.MethodPost, "/anomaly_detection_overrides", o.Key, map[string]any{"scope": scope, "level": "high"}))
	})
	wantOnly(t, "set or delete", answers, "200", "201")
}

// TestRaceOverrideFeedback: feedback on one scope from many requests at
// once applies each step once, one after the other: from off, raceWidth
// steps up answer low once, default (deleted) once, then high, and the
// scope ends at high; as many steps down from there answer default once,
// low once, then off. No step answers a 404.
func TestRaceOverrideFeedback(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "racefeedback")
	scope := map[string]any{"subject": "netflix", "measurement_type": "VideoMeasurement", "metric": "initial_loading_time", "detection_pass": "shift"}
	e.AdminCreate(t, o.Key, "/anomaly_detection_overrides", map[string]any{"scope": scope, "level": "off"})
	step := func(direction string, want map[string]int, final string) {
		t.Helper()
		answers := race(raceWidth, func(int) answer {
			return restAnswer(e.Admin(t, http.MethodPost, "/anomaly_detection_overrides/feedback", o.Key,
				map[string]any{"scope": scope, "direction": direction}))
		})
		wantOnly(t, direction, answers, "200")
		got := map[string]int{}
		for _, a := range answers {
			var body struct {
				Override *struct{ Level string } `json:"anomaly_detection_override"`
				Deleted  bool                    `json:"deleted"`
			}
			if err := json.Unmarshal([]byte(a.raw), &body); err != nil {
				continue // reported by wantOnly
			}
			switch {
			case body.Deleted:
				got["default"]++
			case body.Override != nil:
				got[body.Override.Level]++
			}
		}
		for level, n := range want {
			if got[level] != n {
				t.Errorf("%s: levels answered %v, want %v", direction, got, want)
				break
			}
		}
		list := e.Admin(t, http.MethodGet, "/anomaly_detection_overrides", o.Key, nil)
		levels := apitest.Field(t, list.Obj(t)["anomaly_detection_overrides"], "level")
		if len(levels) != 1 || levels[0] != final {
			t.Errorf("%s: stored levels %v, want [%s]", direction, levels, final)
		}
	}
	step("up", map[string]int{"low": 1, "default": 1, "high": raceWidth - 2}, "high")
	step("down", map[string]int{"default": 1, "low": 1, "off": raceWidth - 2}, "off")
}
