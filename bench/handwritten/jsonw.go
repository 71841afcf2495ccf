package main

import (
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// The appenders write JSON values byte for byte as fleetgraph does:
// strings escaped as gqlgen's writeQuotedString (only what JSON requires),
// instants as RFC 3339 with nanoseconds, floats as %g.

const hexDigits = "0123456789ABCDEF"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\n':
			b = append(b, `\n`...)
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendText(b []byte, t pgtype.Text) []byte {
	if !t.Valid {
		return append(b, "null"...)
	}
	return appendString(b, t.String)
}

func appendInt8(b []byte, n pgtype.Int8) []byte {
	if !n.Valid {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, n.Int64, 10)
}

func appendFloat8(b []byte, f pgtype.Float8) []byte {
	if !f.Valid {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f.Float64, 'g', -1, 64)
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendTimestamptz(b []byte, t pgtype.Timestamptz) []byte {
	if !t.Valid {
		return append(b, "null"...)
	}
	return appendTime(b, t.Time)
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendBool(b []byte, v pgtype.Bool) []byte {
	if !v.Valid {
		return append(b, "null"...)
	}
	return strconv.AppendBool(b, v.Bool)
}

// appendGroups writes the groups (ids and names side by side) as a list of
// {"id","name"}.
func appendGroups(b []byte, ids []int64, names []string) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"name":`...)
		b = appendString(b, names[i])
		b = append(b, '}')
	}
	return append(b, ']')
}
