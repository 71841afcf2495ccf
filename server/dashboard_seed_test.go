package server_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// dashboardFleet is what seedDashboard made: the probes in order
// (probe-0001 first) and the ids of its anomaly episodes.
type dashboardFleet struct {
	Probes               []apitest.Client
	OpenAnomaly          string // probe-0001's open download episode
	ResolvedAnomaly      string
	OtherOpen            string // probe-0003's open video episode
	ConfigID, WebhookID  int64
	BerlinID, ViennaID   int64
	MeasurementsPerProbe int
}

// seedDashboard fills a data owner as `serve --demo` does, at any size:
// probes labelled probe-0001.. with tags, two groups, an ISP contract each,
// days of speed tests every perDay-th of a day (download dipping on
// probe-0001 two days ago, where its open anomaly episode is), system status
// records, anomaly episodes open and resolved, a public config with a
// draft, and a webhook to rc (nil: none).
func seedDashboard(t testing.TB, o *apitest.Owner, probes, days, perDay int, rc *apitest.Receiver, e *apitest.Env) dashboardFleet {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Minute)
	isp := o.NewISP(t, store.IspInput{Name: apitest.Ptr("Deutsche Telekom")})
	f := dashboardFleet{MeasurementsPerProbe: days * perDay}
	var berlin, vienna []int64
	for n := 1; n <= probes; n++ {
		seen := now.Add(-time.Duration(n%7) * time.Minute)
		if n%10 == 9 {
			seen = now.Add(-30 * time.Hour) // offline
		}
		c := o.NewClient(t, store.NewClient{Label: apitest.Ptr(fmt.Sprintf("probe-%04d", n)),
			Tags: []string{[]string{"berlin", "vienna"}[n%2], "fiber"}, LastSeenAt: &seen})
		f.Probes = append(f.Probes, c)
		if n%2 == 0 {
			berlin = append(berlin, c.ID)
		} else {
			vienna = append(vienna, c.ID)
		}
		from := now.AddDate(0, -2, 0)
		o.NewContract(t, store.NewContract{IspID: isp.ID, ClientID: c.ID, Name: "Home 250",
			DownloadSpeed: apitest.Ptr(int64(250000)), UploadSpeed: apitest.Ptr(int64(40000)), ValidFrom: &from})
	}
	f.BerlinID = o.NewGroup(t, "Berlin", berlin...)
	f.ViennaID = o.NewGroup(t, "Vienna", vienna...)

	// Measurements, in batches of whole probes.
	var batch []map[string]any
	flush := func() {
		if len(batch) > 0 {
			o.InsertDocuments(t, "measurement", batch...)
			batch = batch[:0]
		}
	}
	step := 24 * time.Hour / time.Duration(perDay)
	for i, c := range f.Probes {
		for k := 0; k < days*perDay; k++ {
			at := now.Add(-time.Duration(k) * step)
			down := 230 + 15*math.Sin(float64(k)/5+float64(i))
			if i == 0 && at.After(now.Add(-60*time.Hour)) && at.Before(now.Add(-36*time.Hour)) {
				down = 80 // the dip of the open episode
			}
			batch = append(batch, map[string]any{"id": fmt.Sprintf("dash-%d-%d", c.ID, k), "type": "SpeedtestMeasurement",
				"client_uuid": c.UUID, "created_at": at.Format(time.RFC3339), "client_type": "automator", "client_version": "3.6.0",
				"study":            map[string]any{"subject": "ookla", "study_id": "ookla-default", "study_name": "ookla default"},
				"statistic_values": map[string]any{"download": math.Round(down*10) / 10, "upload": 38 + float64(k%5), "latency": 12 + float64(k%7)},
				"success":          true})
		}
		if len(batch) >= 5000 {
			flush()
		}
	}
	flush()

	for n, c := range f.Probes[:min(12, len(f.Probes))] {
		cpu, mem, fs := float64(10+3*n), float64(30+2*n), float64(40+n)
		if n == 6 {
			fs = 97 // critical
		}
		for k := 0; k < 6; k++ {
			o.NewSystemStatus(t, apitest.StatusRecord{ClientUUID: c.UUID, CreatedAt: now.Add(-time.Duration(k) * 2 * time.Hour),
				CPU: apitest.Ptr(cpu - float64(k)), Memory: apitest.Ptr(mem), Filesystem: apitest.Ptr(fs)})
		}
	}

	anomaly := func(id string, c apitest.Client, typ, subject, metric, severity, status string, from, to time.Time) map[string]any {
		a := map[string]any{"id": id, "rule_id": metric, "client_uuid": c.UUID, "measurement_type": typ, "subject": subject,
			"metric": metric, "detection_pass": "shift", "severity": severity, "status": status,
			"first_seen_at": from.Format(time.RFC3339), "last_seen_at": to.Format(time.RFC3339), "created_at": from.Format(time.RFC3339),
			"value": 80}
		if status == "resolved" {
			a["resolved_at"] = to.Add(time.Hour).Format(time.RFC3339)
		}
		return a
	}
	first, third := f.Probes[0], f.Probes[min(2, len(f.Probes)-1)]
	f.OpenAnomaly = fmt.Sprintf("speedtest-download::shift::%d", now.Add(-60*time.Hour).Unix())
	f.ResolvedAnomaly = fmt.Sprintf("speedtest-download::shift::%d", now.Add(-240*time.Hour).Unix())
	f.OtherOpen = fmt.Sprintf("video-stalling::shift::%d", now.Add(-20*time.Hour).Unix())
	o.InsertDocuments(t, "anomaly_event",
		anomaly(f.OpenAnomaly, first, "SpeedtestMeasurement", "ookla", "download", "critical", "new", now.Add(-60*time.Hour), now.Add(-36*time.Hour)),
		anomaly(f.ResolvedAnomaly, first, "SpeedtestMeasurement", "ookla", "download", "warning", "resolved", now.Add(-240*time.Hour), now.Add(-236*time.Hour)),
		anomaly(f.OtherOpen, third, "VideoMeasurement", "youtube", "total_stalling_time", "warning", "new", now.Add(-20*time.Hour), now.Add(-18*time.Hour)))

	f.ConfigID = o.NewConfigWith(t, apitest.ConfigOpts{Name: "Field probes", IsDefault: true})
	if rc != nil {
		w := e.AdminCreate(t, o.Key, "/webhooks", map[string]any{"name": "Ops receiver", "url": rc.URL + "/hook",
			"event_types": []string{store.EventAnomalyCreated}})
		f.WebhookID = apitest.Int(t, w["id"])
	}
	return f
}
