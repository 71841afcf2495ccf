package pg

import (
	"math"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/search"
)

// decimalFormat is the subset of Java's DecimalFormat patterns that the
// format of numeric aggregations takes (histogram key_as_string, metric
// value_as_string): digits 0 and #, one decimal point, grouping with ','
// ("#,##0.00", "0.0#", "#"), with literal text before and after the
// number ("0.0 ms", "'#'0", quotes as in Java: ” is a quote). Other
// pattern characters (%, ‰, ¤, E, ;) are a 400, as is a pattern without
// digits.
type decimalFormat struct {
	minInt, minFrac, maxFrac int
	group                    int // digits per group, 0: no grouping
	prefix, suffix           string
}

func parseDecimalFormat(pattern string) (*decimalFormat, error) {
	prefix, p, suffix, err := splitDecimalPattern(pattern)
	if err != nil {
		return nil, err
	}
	f := &decimalFormat{prefix: prefix, suffix: suffix}
	intPart, frac, hasPoint := strings.Cut(p, ".")
	if strings.ContainsAny(frac, ".,") {
		return nil, search.Badf("unsupported decimal format pattern %q", p)
	}
	digits := 0
	for i, r := range intPart {
		switch r {
		case '0':
			f.minInt++
			digits++
		case '#':
			if f.minInt > 0 {
				return nil, search.Badf("malformed decimal format pattern %q: # after 0", p)
			}
			digits++
		case ',':
			f.group = len(intPart) - i - 1
		default:
			return nil, search.Badf("unsupported decimal format pattern %q (digits 0 and #, '.' and ',' only)", p)
		}
	}
	for _, r := range frac {
		switch r {
		case '0':
			if f.maxFrac > f.minFrac {
				return nil, search.Badf("malformed decimal format pattern %q: 0 after #", p)
			}
			f.minFrac++
			f.maxFrac++
		case '#':
			f.maxFrac++
		default:
			return nil, search.Badf("unsupported decimal format pattern %q (digits 0 and #, '.' and ',' only)", p)
		}
	}
	if digits+f.maxFrac == 0 || (hasPoint && intPart == "" && frac == "") {
		return nil, search.Badf("malformed decimal format pattern %q", pattern)
	}
	return f, nil
}

// splitDecimalPattern cuts a pattern into its literal prefix, its number
// part (the run of 0 # , .) and its literal suffix, unquoting the literals.
func splitDecimalPattern(p string) (prefix, number, suffix string, err error) {
	var lit [2]strings.Builder
	part, quoted := 0, false
	var num strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit[part].WriteByte('\'')
				i++
				continue
			}
			quoted = !quoted
		case quoted:
			lit[part].WriteByte(c)
		case strings.IndexByte("0#,.", c) >= 0:
			if part == 1 && lit[1].Len() > 0 || part == 1 && num.Len() > 0 && i > 0 && strings.IndexByte("0#,.", p[i-1]) < 0 {
				return "", "", "", search.Badf("unsupported decimal format pattern %q: digits after the suffix", p)
			}
			num.WriteByte(c)
			part = 1
		case strings.ContainsRune("%;E", rune(c)) || strings.HasPrefix(p[i:], "‰") || strings.HasPrefix(p[i:], "¤"):
			return "", "", "", search.Badf("unsupported decimal format pattern %q (digits 0 and #, '.' and ',', literal text)", p)
		default:
			lit[part].WriteByte(c)
		}
	}
	if quoted {
		return "", "", "", search.Badf("malformed decimal format pattern %q: unclosed quote", p)
	}
	return lit[0].String(), num.String(), lit[1].String(), nil
}

// format writes v as DecimalFormat does (rounding half-even).
func (f *decimalFormat) format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	}
	scale := math.Pow(10, float64(f.maxFrac))
	r := math.RoundToEven(v*scale) / scale
	s := strconv.FormatFloat(math.Abs(r), 'f', f.maxFrac, 64)
	ip, fp, _ := strings.Cut(s, ".")
	for len(fp) > f.minFrac && strings.HasSuffix(fp, "0") {
		fp = fp[:len(fp)-1]
	}
	if ip == "0" && f.minInt == 0 {
		ip = ""
	}
	for len(ip) < f.minInt {
		ip = "0" + ip
	}
	if f.group > 0 && len(ip) > f.group {
		var b strings.Builder
		for i, c := range ip {
			if i > 0 && (len(ip)-i)%f.group == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		ip = b.String()
	}
	out := ip
	if fp != "" {
		out += "." + fp
	}
	if out == "" {
		out = "0"
	}
	out = f.prefix + out + f.suffix
	if v < 0 { // Java keeps the sign of a negative value rounded to zero
		out = "-" + out
	}
	return out
}
