package analyzer

// Catalogue is the default rule catalogue: the metrics of the six
// measurement types of testdata/ every data owner watches unless it
// disables them. Every rule runs every pass and applies to any subject.
func Catalogue() []Rule {
	rules := make([]Rule, len(catalogue))
	for i, c := range catalogue {
		rules[i] = Rule{
			ID:              c.id,
			Name:            c.name,
			MeasurementType: c.typ,
			Metric:          "statistic_values." + c.metric,
			Direction:       c.dir,
			Unit:            c.unit,
			Passes:          []Pass{Spike, Shift, DataQuality},
			Enabled:         true,
			Builtin:         true,
		}
	}
	return rules
}

// Percent is the unit of a percentage: its values lie in [0, 100].
const Percent = "%"

var catalogue = []struct {
	id, name, typ, metric string
	dir                   Direction
	unit                  string
}{
	{"speedtest-download", "Speedtest download", "SpeedtestMeasurement", "download", Down, "Mbit/s"},
	{"speedtest-upload", "Speedtest upload", "SpeedtestMeasurement", "upload", Down, "Mbit/s"},
	{"speedtest-ping", "Speedtest ping", "SpeedtestMeasurement", "ping", Up, "ms"},
	{"speedtest-jitter", "Speedtest jitter", "SpeedtestMeasurement", "jitter", Up, "ms"},
	{"web-plt", "Web page load time", "WebMeasurement", "page_load_time", Up, "ms"},
	{"web-ttfb", "Web time to first byte", "WebMeasurement", "time_to_first_byte", Up, "ms"},
	{"video-initial-loading", "Video initial loading time", "VideoMeasurement", "initial_loading_time", Up, "ms"},
	{"video-stalling", "Video total stalling time", "VideoMeasurement", "total_stalling_time", Up, "ms"},
	{"video-stalling-number", "Video number of stalls", "VideoMeasurement", "stalling_number", Up, "count"},
	{"dns-resolve-time", "DNS resolve time", "NetworkMeasurement", "resolve_time", Up, "ms"},
	{"ping-loss", "Ping packet loss", "NetworkMeasurement", "packet_loss", Up, Percent},
	{"conferencing-packet-loss", "Conferencing packet loss", "ConferencingMeasurement", "packet_loss", Up, Percent},
	{"conferencing-rtt", "Conferencing round-trip time", "ConferencingMeasurement", "round_trip_time", Up, "ms"},
	{"meet-jitter", "Conferencing audio jitter", "ConferencingMeasurement", "audio_jitter", Up, "ms"},
	{"gaming-latency", "Gaming latency", "GamingMeasurement", "latency", Up, "ms"},
	{"gaming-packet-loss", "Gaming packet loss", "GamingMeasurement", "packet_loss", Up, Percent},
	{"gaming-fps", "Gaming frames per second", "GamingMeasurement", "fps", Down, "fps"},
}
