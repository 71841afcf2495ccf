package main

import (
	"context"
	"encoding/json"

	"github.com/fleetgraph/fleetgraph/configdoc"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// demoStudies are the demo fleet's studies; the draft adds the last one.
var demoStudies = []map[string]any{
	{"id": "yt-1080p", "type": "VIDEO", "subject": "youtube", "params": map[string]any{"resolution": "1080p", "duration_s": 60},
		"names": map[string]any{"en_US": map[string]any{"short": "YouTube", "long": "YouTube 1080p playback"}}},
	{"id": "web-news", "type": "WEB", "subject": "website", "params": map[string]any{"url": "https://www.tagesschau.de"},
		"names": map[string]any{"en_US": map[string]any{"short": "News", "long": "News site load"}}},
	{"id": "ookla-speed", "type": "SPEEDTEST", "subject": "ookla", "params": map[string]any{},
		"names": map[string]any{"en_US": map[string]any{"short": "Ookla", "long": "Ookla speed test"}}},
	{"id": "dns-lookup", "type": "NETWORK", "subject": "dns", "params": map[string]any{"hosts": []string{"example.org"}},
		"names": map[string]any{"en_US": map[string]any{"short": "DNS", "long": "DNS lookups"}}},
}

// demoConfigs makes the demo's default public config (published, revision
// 1, and a draft, revision 2, adding a DNS study) and its default schedule
// config (published); it returns the public config's id.
func demoConfigs(ctx context.Context, st *store.Store, owner int64) (int64, error) {
	published := map[string]any{"version": 1, "studies": demoStudies[:3],
		"credentials": map[string]any{"ookla": map[string]any{}}}
	draft := map[string]any{"version": 1, "studies": demoStudies, "credentials": map[string]any{"ookla": map[string]any{}}}
	schedule := map[string]any{"version": 1, "studySchedules": []any{
		map[string]any{"studyIds": []string{"yt-1080p", "web-news"}, "cron": "0 * * * *"},
		map[string]any{"studyIds": []string{"ookla-speed"}, "cron": "30 */6 * * *"}},
		"updates": map[string]any{"channel": "stable"}}

	name := "Default measurements"
	build, err := demoVersion(model.ConfigPublic, published)
	if err != nil {
		return 0, err
	}
	id, _, err := st.CreateConfig(ctx, owner, nil, store.ConfigInput{Kind: store.ConfigPublic, Name: &name,
		Description: &name, IsDefault: true, Publish: true}, build)
	if err != nil {
		return 0, err
	}
	if build, err = demoVersion(model.ConfigPublic, draft); err != nil {
		return 0, err
	}
	if _, err := st.UpdateConfig(ctx, owner, nil, id, store.ConfigInput{Kind: store.ConfigPublic}, build); err != nil {
		return 0, err
	}
	schedName := "Hourly schedule"
	if build, err = demoVersion(model.ConfigAutomator, schedule); err != nil {
		return 0, err
	}
	_, _, err = st.CreateConfig(ctx, owner, nil, store.ConfigInput{Kind: store.ConfigAutomator, Name: &schedName,
		IsDefault: true, Publish: true}, build)
	return id, err
}

// demoVersion checks a demo document as the API would.
func demoVersion(kind model.ConfigKind, doc any) (store.BuildVersion, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return configdoc.Build(kind, v)
}
