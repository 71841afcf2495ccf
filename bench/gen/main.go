// Command gen writes realistic measurement documents as NDJSON for import
// benchmarks, the same output for the same flags:
//
//	go run ./bench/gen -n 1000000 -clients 2000 -days 30 > big.ndjson
//	fleetgraph import --data-owner bench --kind measurement big.ndjson
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/fleetgraph/fleetgraph/isotime"
)

// service is a measurement type and subject with its study.
type service struct {
	typ, subject, studyID, target string
	weight                        int // relative frequency
}

var services = []service{
	{"VideoMeasurement", "youtube", "yt-1080p-default", "https://www.youtube.com/watch?v=aqz-KE-bpKQ", 12},
	{"VideoMeasurement", "netflix", "nflx-default", "https://www.netflix.com/watch/80018499", 6},
	{"VideoMeasurement", "amazon_trailer", "amzn-trailer", "https://www.amazon.de/gp/video/detail/B08WJP55PR", 4},
	{"WebMeasurement", "website", "web-top10", "https://www.wikipedia.org/", 14},
	{"WebMeasurement", "lighthouse", "lh-top10", "https://www.bbc.co.uk/", 3},
	{"NetworkMeasurement", "dns", "dns-resolvers", "example.org", 12},
	{"NetworkMeasurement", "traceroute", "tr-cdn", "www.cloudflare.com", 5},
	{"NetworkMeasurement", "icmpping", "ping-gateway", "192.0.2.1", 14},
	{"NetworkMeasurement", "tlsmeter", "tls-top10", "www.google.com", 5},
	{"SpeedtestMeasurement", "fastcom", "fastcom", "https://fast.com/", 4},
	{"SpeedtestMeasurement", "ookla", "ookla-nearest", "ookla", 6},
	{"SpeedtestMeasurement", "breitbandmessung", "bbm", "breitbandmessung", 2},
	{"SpeedtestMeasurement", "nperf", "nperf", "nperf", 2},
	{"ConferencingMeasurement", "googlemeet", "meet-echo", "https://meet.google.com/", 3},
	{"ConferencingMeasurement", "microsoftteams", "teams-echo", "https://teams.microsoft.com/", 3},
	{"GamingMeasurement", "geforce_now", "gfn-fortnite", "geforce_now", 2},
	{"GamingMeasurement", "xbox_cloud", "xcloud-halo", "xbox_cloud", 2},
}

var isps = []string{"Telekom", "Vodafone", "O2", "1&1", "EWE", "M-net"}

func main() {
	n := flag.Int("n", 100000, "number of measurements")
	clients := flag.Int("clients", 200, "number of clients")
	days := flag.Int("days", 30, "days the measurements spread over")
	seed := flag.Uint64("seed", 1, "random seed")
	start := flag.String("start", "2026-11-01", "first day (UTC)")
	flag.Parse()
	from, err := time.Parse("2006-01-02", *start)
	if err != nil || *n < 0 || *clients < 1 || *days < 1 {
		fmt.Fprintln(os.Stderr, "gen: need -n >= 0, -clients >= 1, -days >= 1 and -start YYYY-MM-DD")
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(*seed, 0x9e3779b97f4a7c15))
	uuids := make([]string, *clients)
	for i := range uuids {
		uuids[i] = uuid(rng)
	}
	total := 0
	for _, s := range services {
		total += s.weight
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	enc := json.NewEncoder(w)
	span := time.Duration(*days) * 24 * time.Hour
	for i := range *n {
		s := pick(rng, total)
		c := rng.IntN(*clients)
		// Spread evenly over the span, jittered, so created_at mostly rises.
		at := from.Add(time.Duration(float64(span) * float64(i) / float64(max(*n, 1)))).Add(time.Duration(rng.IntN(60000)) * time.Millisecond)
		doc := map[string]any{
			"id":               uuid(rng),
			"type":             s.typ,
			"client_uuid":      uuids[c],
			"created_at":       isotime.FormatMillis(at),
			"client_type":      "automator",
			"client_version":   fmt.Sprintf("3.%d.%d", 4+c%2, c%3),
			"study":            map[string]any{"subject": s.subject, "study_id": s.studyID, "target": s.target},
			"network":          map[string]any{"isp": isps[c%len(isps)], "connection_type": []string{"fixed", "fixed", "mobile"}[c%3]},
			"success":          rng.Float64() > 0.02,
			"statistic_values": stats(rng, s),
		}
		if err := enc.Encode(doc); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func pick(rng *rand.Rand, total int) service {
	r := rng.IntN(total)
	for _, s := range services {
		if r < s.weight {
			return s
		}
		r -= s.weight
	}
	return services[0]
}

func uuid(rng *rand.Rand) string {
	a, b := rng.Uint64(), rng.Uint64()
	a = a&^(0xf<<12) | 0x4<<12 // version 4
	b = b&^(0x3<<62) | 0x2<<62 // RFC 4122 variant
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, a>>16&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

// norm is a positive normally distributed value rounded to 3 decimals.
func norm(rng *rand.Rand, mean, sd float64) float64 {
	return math.Round(math.Max(0, mean+sd*rng.NormFloat64())*1000) / 1000
}

func stats(rng *rand.Rand, s service) map[string]any {
	switch s.typ {
	case "VideoMeasurement":
		stalls := rng.IntN(4) * rng.IntN(2)
		return map[string]any{"initial_loading_time": norm(rng, 950, 250), "stalling_number": stalls,
			"total_stalling_time": float64(stalls) * norm(rng, 700, 200), "average_video_bitrate": norm(rng, 3800, 900),
			"average_video_height": []int{480, 720, 1080, 1080, 1080}[rng.IntN(5)], "played_duration": 60000,
			"dropped_frames": rng.IntN(20)}
	case "WebMeasurement":
		if s.subject == "lighthouse" {
			return map[string]any{"performance_score": math.Min(1, norm(rng, 0.82, 0.1)), "accessibility_score": math.Min(1, norm(rng, 0.95, 0.03)),
				"largest_contentful_paint": norm(rng, 2100, 600), "cumulative_layout_shift": norm(rng, 0.05, 0.03),
				"total_blocking_time": norm(rng, 150, 80)}
		}
		return map[string]any{"page_load_time": norm(rng, 1600, 450), "dom_content_loaded": norm(rng, 1000, 250),
			"first_contentful_paint": norm(rng, 700, 180), "time_to_first_byte": norm(rng, 140, 50),
			"transferred_bytes": int(norm(rng, 1.9e6, 3e5)), "request_count": 50 + rng.IntN(40)}
	case "NetworkMeasurement":
		switch s.subject {
		case "dns":
			return map[string]any{"resolve_time": norm(rng, 18, 9), "resolver": "192.0.2.53", "rcode": "NOERROR", "answer_count": 1 + rng.IntN(3)}
		case "traceroute":
			return map[string]any{"hop_count": 7 + rng.IntN(8), "final_rtt": norm(rng, 20, 6), "destination_reached": rng.Float64() > 0.05}
		case "icmpping":
			avg := norm(rng, 14, 5)
			return map[string]any{"rtt_avg": avg, "rtt_min": math.Round(avg*0.8*1000) / 1000, "rtt_max": math.Round(avg*1.6*1000) / 1000,
				"packet_loss": []float64{0, 0, 0, 0, 0.1, 0.2}[rng.IntN(6)], "packets_sent": 10}
		default:
			return map[string]any{"handshake_time": norm(rng, 55, 15), "tls_version": "TLSv1.3", "cipher_suite": "TLS_AES_128_GCM_SHA256"}
		}
	case "SpeedtestMeasurement":
		return map[string]any{"download": norm(rng, 90, 25), "upload": norm(rng, 35, 10), "ping": norm(rng, 13, 4), "jitter": norm(rng, 1.8, 0.8)}
	case "ConferencingMeasurement":
		return map[string]any{"audio_jitter": norm(rng, 8, 3), "video_fps": norm(rng, 28, 2), "packet_loss": norm(rng, 0.2, 0.2),
			"round_trip_time": norm(rng, 50, 15), "video_height": 720}
	default:
		return map[string]any{"latency": norm(rng, 32, 8), "fps": norm(rng, 58, 3), "packet_loss": norm(rng, 0.1, 0.1), "jitter": norm(rng, 2.4, 0.8)}
	}
}
