package apitest

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of a /metrics endpoint, parsed from the Prometheus
// text exposition format.
type Metrics map[string]*dto.MetricFamily

// Scrape GETs url (a /metrics address) as Prometheus does and parses the
// answer; anything but a 200 in the text format fails the test.
func Scrape(t testing.TB, url string) Metrics {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("scrape %s: status %d, Content-Type %q", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: not the exposition format: %v", url, err)
	}
	return Metrics(fams)
}

// Value is the value of the series of family name whose labels include
// labels (every label given must match; "" matches an absent label): a
// counter's or gauge's value, a histogram's count. Several matching series
// are added up; none is 0.
func (m Metrics) Value(name string, labels map[string]string) float64 {
	f := m[name]
	if f == nil {
		return 0
	}
	sum := 0.0
	for _, s := range f.GetMetric() {
		if !hasLabels(s, labels) {
			continue
		}
		switch {
		case s.Counter != nil:
			sum += s.Counter.GetValue()
		case s.Gauge != nil:
			sum += s.Gauge.GetValue()
		case s.Histogram != nil:
			sum += float64(s.Histogram.GetSampleCount())
		case s.Untyped != nil:
			sum += s.Untyped.GetValue()
		}
	}
	return sum
}

// LabelValues lists the distinct values of label in family name.
func (m Metrics) LabelValues(name, label string) []string {
	var out []string
	for _, s := range m[name].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == label && !slices.Contains(out, l.GetValue()) {
				out = append(out, l.GetValue())
			}
		}
	}
	slices.Sort(out)
	return out
}

func hasLabels(s *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		got := ""
		for _, l := range s.GetLabel() {
			if l.GetName() == k {
				got = l.GetValue()
			}
		}
		if got != v {
			return false
		}
	}
	return true
}
