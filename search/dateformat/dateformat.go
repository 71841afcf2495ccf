// Package dateformat reads the format option of a range query or a
// date_histogram: "||"-separated Elasticsearch named formats (date,
// year_month, basic_date_time, ...), epoch_millis, epoch_second and Java
// DateTimeFormatter patterns (yyyy-MM-dd HH:mm), turned into Go layouts.
// Unknown names and pattern letters are a 400 (search.ErrBadRequest).
package dateformat

import (
	"strings"
	"time"
	"unicode"

	"github.com/fleetgraph/fleetgraph/search"
)

// Format is a parsed format. The zero Format reads ISO 8601 only.
type Format struct {
	Layouts []Layout // the patterns, as Go layouts
	Millis  bool     // epoch_millis
	Seconds bool     // epoch_second
}

// Layout is a Go layout and the precision of its dates ("" for a time of
// day, else the date-math unit: d, M or y).
type Layout struct{ Layout, Prec string }

// Custom reports whether the format has patterns of its own (not only the
// ISO 8601 formats every date is read with).
func (f Format) Custom() bool { return len(f.Layouts) > 0 }

// Named formats: "" reads ISO 8601 like the default.
var namedFormats = map[string]string{
	"strict_date_optional_time": "", "date_optional_time": "", "strict_date_optional_time_nanos": "",
	"date_time": "", "strict_date_time": "", "date_time_no_millis": "", "strict_date_time_no_millis": "",
	"iso8601": "",
	"date":    "2006-01-02", "strict_date": "2006-01-02", "year_month_day": "2006-01-02", "strict_year_month_day": "2006-01-02",
	"basic_date": "20060102", "year_month": "2006-01", "strict_year_month": "2006-01", "year": "2006", "strict_year": "2006",
	"date_hour_minute_second": "2006-01-02T15:04:05", "strict_date_hour_minute_second": "2006-01-02T15:04:05",
	"date_hour_minute_second_millis": "2006-01-02T15:04:05.000", "strict_date_hour_minute_second_millis": "2006-01-02T15:04:05.000",
	"date_hour_minute": "2006-01-02T15:04", "strict_date_hour_minute": "2006-01-02T15:04",
	"date_hour": "2006-01-02T15", "strict_date_hour": "2006-01-02T15",
	"basic_date_time": "20060102T150405.000Z0700", "basic_date_time_no_millis": "20060102T150405Z0700",
}

// Parse reads a format; unknown names and pattern letters are a 400.
func Parse(format string) (Format, error) {
	var f Format
	if strings.TrimSpace(format) == "" {
		return f, nil
	}
	for _, part := range strings.Split(format, "||") {
		part = strings.TrimSpace(part)
		switch part {
		case "epoch_millis":
			f.Millis = true
			continue
		case "epoch_second":
			f.Seconds = true
			continue
		}
		if l, ok := namedFormats[part]; ok {
			if l != "" {
				f.Layouts = append(f.Layouts, Layout{l, layoutPrecision(l)})
			}
			continue
		}
		l, err := javaLayout(part)
		if err != nil {
			return f, err
		}
		f.Layouts = append(f.Layouts, Layout{l, layoutPrecision(l)})
	}
	return f, nil
}

// javaLayout turns a Java DateTimeFormatter pattern into a Go layout.
func javaLayout(p string) (string, error) {
	var b strings.Builder
	rs := []rune(p)
	for i := 0; i < len(rs); {
		r := rs[i]
		if r == '\'' {
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j >= len(rs) {
				return "", search.Badf("unsupported date format %q (unterminated quote)", p)
			}
			lit := string(rs[i+1 : j])
			if strings.ContainsAny(lit, "0123456789") && lit != "" {
				return "", search.Badf("unsupported date format %q (digits in a literal)", p)
			}
			b.WriteString(lit)
			i = j + 1
			continue
		}
		if !unicode.IsLetter(r) {
			if unicode.IsDigit(r) {
				return "", search.Badf("unsupported date format %q", p)
			}
			b.WriteRune(r)
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j] == r {
			j++
		}
		n := j - i
		var out string
		switch {
		case (r == 'y' || r == 'u') && n == 2:
			out = "06"
		case r == 'y' || r == 'u':
			out = "2006"
		case r == 'M' && n == 1:
			out = "1"
		case r == 'M' && n == 2:
			out = "01"
		case r == 'M' && n == 3:
			out = "Jan"
		case r == 'M':
			out = "January"
		case r == 'd' && n == 1:
			out = "2"
		case r == 'd' && n == 2:
			out = "02"
		case r == 'H' && n == 2:
			out = "15"
		case r == 'h' && n == 1:
			out = "3"
		case r == 'h' && n == 2:
			out = "03"
		case r == 'm' && n == 1:
			out = "4"
		case r == 'm' && n == 2:
			out = "04"
		case r == 's' && n == 1:
			out = "5"
		case r == 's' && n == 2:
			out = "05"
		case r == 'S' && n <= 9:
			out = strings.Repeat("0", n)
			if !strings.HasSuffix(b.String(), ".") && !strings.HasSuffix(b.String(), ",") {
				return "", search.Badf("unsupported date format %q (fractions must follow '.')", p)
			}
		case r == 'a' && n == 1:
			out = "PM"
		case r == 'E' && n <= 3:
			out = "Mon"
		case r == 'E':
			out = "Monday"
		case (r == 'X' || r == 'x') && n == 1:
			out = "Z07"
		case (r == 'X' || r == 'x') && n == 2:
			out = "Z0700"
		case r == 'X' || r == 'Z' && n == 5:
			out = "Z07:00"
		case r == 'x':
			out = "-07:00"
		case r == 'Z':
			out = "-0700"
		default:
			return "", search.Badf("unsupported date format %q (pattern letter %q)", p, string(rs[i:j]))
		}
		b.WriteString(out)
		i = j
	}
	return b.String(), nil
}

// layoutPrecision is the unit a date of layout l is precise to: "" when
// it has a time of day, else d, M or y.
func layoutPrecision(l string) string {
	switch {
	case strings.Contains(l, "15") || strings.Contains(l, "03") || strings.Contains(l, "3:") || strings.Contains(l, "04"):
		return ""
	case strings.Contains(strings.ReplaceAll(l, "2006", ""), "2"):
		return "d"
	case strings.Contains(strings.ReplaceAll(l, "2006", ""), "1") || strings.Contains(l, "Jan"):
		return "M"
	}
	return "y"
}

// Read reads an absolute date with the format's layouts, returning its precision.
func (f Format) Read(s string, loc *time.Location) (time.Time, string, bool) {
	for _, l := range f.Layouts {
		if t, err := time.ParseInLocation(l.Layout, s, loc); err == nil {
			return t, l.Prec, true
		}
	}
	return time.Time{}, "", false
}
