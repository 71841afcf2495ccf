// Package rawjson carries stored JSON documents to answers as bytes.
// Decoding a document of 200 KB into map[string]any and encoding it again
// cost most of the CPU of a big answer (issue 16); the functions here give
// the same bytes that decoding (with UseNumber) and json.Marshal give, by
// copying: PostgreSQL's jsonb text made compact and escaped as json.Marshal
// escapes (Compact), with object keys reordered as json.Marshal orders a
// map's (Sorted); Append encodes a value holding such documents as
// json.Marshal does, copying them as they are; Members reads the top-level
// members of the server's own JSON without decoding their values.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Raw is a JSON value written as json.Marshal writes it: compact, with <, >,
// &, U+2028 and U+2029 escaped. json.Marshal and Append copy it unchanged.
type Raw []byte

// MarshalJSON is r; an empty Raw is null.
func (r Raw) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// inString marks the bytes a string of Compact's input cannot copy as they
// are: its end, an escape, and what json.Marshal escapes (<, >, & and the
// first byte of U+2028 and U+2029).
var inString = [256]bool{'"': true, '\\': true, '<': true, '>': true, '&': true, 0xE2: true}

// Compact is text, valid JSON (PostgreSQL's jsonb text), without the
// whitespace between tokens and escaped as json.Marshal escapes: the bytes
// json.Marshal(json.RawMessage(text)) gives, without validating them again.
// Object keys keep their order.
func Compact(text []byte) Raw {
	out := make([]byte, 0, len(text))
	start := 0
	for i := 0; i < len(text); {
		switch c := text[i]; c {
		case ' ', '\t', '\n', '\r':
			out = append(out, text[start:i]...)
			i++
			start = i
			continue
		case '"':
		default:
			i++
			continue
		}
		for i++; i < len(text); i++ { // inside a string
			for i < len(text) && !inString[text[i]] {
				i++
			}
			if i == len(text) {
				break
			}
			c := text[i]
			if c == '"' {
				break
			}
			switch {
			case c == '\\':
				i++ // the escaped byte
			case c == 0xE2 && i+2 < len(text) && text[i+1] == 0x80 && text[i+2]&^1 == 0xA8:
				out = append(append(out, text[start:i]...), '\\', 'u', '2', '0', '2', hex[text[i+2]&0xF])
				i += 2
				start = i + 1
			case c != 0xE2:
				out = append(append(out, text[start:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
				start = i + 1
			}
		}
		i++
	}
	return append(out, text[start:]...)
}

// Sorted is the bytes json.Marshal gives for text decoded into any (with
// UseNumber): compact, escaped as json.Marshal escapes, object keys in
// byte order (a repeated key: its last value). text must be valid JSON.
func Sorted(text []byte) (Raw, error) {
	i := skipSpace(text, 0)
	end := skipValue(text, i)
	if end == i || skipSpace(text, end) != len(text) {
		return nil, errors.New("rawjson: not one JSON value")
	}
	return sortedValue(make([]byte, 0, len(text)), text[i:end])
}

// Append appends what json.Marshal(v) gives, copying the Raw values in v
// (at any depth of maps and lists) as they are.
func Append(dst []byte, v any) ([]byte, error) {
	var e encoder
	e.buf = dst
	if err := e.value(v); err != nil {
		return nil, err
	}
	return e.bytes(), nil
}

// Write writes what json.Marshal(v) gives to w, writing the Raw values in
// v from where they are (a search answer of 24 MB is not copied into a
// buffer first). Nothing is written when v cannot be encoded.
func Write(w io.Writer, v any) error {
	var e encoder
	if err := e.value(v); err != nil {
		return err
	}
	at := 0
	for _, r := range e.raws {
		if _, err := w.Write(e.buf[at:r.at]); err != nil {
			return err
		}
		if _, err := w.Write(r.raw); err != nil {
			return err
		}
		at = r.at
	}
	_, err := w.Write(e.buf[at:])
	return err
}

// encoder writes a value as json.Marshal does into buf, leaving the Raw
// values out of it: raws says where each goes.
type encoder struct {
	buf  []byte
	raws []rawAt
}

type rawAt struct {
	at  int
	raw []byte
}

// bytes is the whole encoding, the Raw values in place.
func (e *encoder) bytes() []byte {
	if len(e.raws) == 0 {
		return e.buf
	}
	n := len(e.buf)
	for _, r := range e.raws {
		n += len(r.raw)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, r := range e.raws {
		out = append(append(out, e.buf[at:r.at]...), r.raw...)
		at = r.at
	}
	return append(out, e.buf[at:]...)
}

func (e *encoder) value(v any) error {
	switch x := v.(type) {
	case Raw:
		b, _ := x.MarshalJSON()
		e.raws = append(e.raws, rawAt{len(e.buf), b})
	case string:
		e.buf = appendString(e.buf, x)
	case map[string]any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.buf = append(e.buf, '{')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(appendString(e.buf, k), ':')
			if err := e.value(x[k]); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(el); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		e.buf = append(e.buf, b...)
	}
	return nil
}

// Members calls yield with the key (decoded) and the value of each member
// of obj, a JSON object, in order, without decoding or validating the
// values; a key obj repeats is yielded each time. It answers false when
// obj is not a well-formed object (what it yielded before then stands) or
// yield stopped it.
func Members(obj []byte, yield func(key string, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	for i = skipSpace(obj, i+1); i < len(obj) && obj[i] != '}'; {
		if obj[i] != '"' {
			return false
		}
		end := skipString(obj, i)
		if end <= i {
			return false
		}
		key, err := unquote(obj[i:end])
		if err != nil {
			return false
		}
		if i = skipSpace(obj, end); i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		if end = skipValue(obj, start); end <= start {
			return false
		}
		if !yield(key, obj[start:end:end]) { // appending to a value copies it
			return false
		}
		if i = skipSpace(obj, end); i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		} else if i >= len(obj) || obj[i] != '}' {
			return false
		}
	}
	return i < len(obj)
}

// Member is the value of obj's member named key (compared as written,
// escapes not decoded), nil when obj is not an object or has no such
// member. It reads no more of obj than it must and allocates nothing.
func Member(obj []byte, key string) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	for i = skipSpace(obj, i+1); i < len(obj) && obj[i] == '"'; i = skipSpace(obj, i+1) {
		end := skipValue(obj, i)
		if end <= i {
			return nil
		}
		name := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		if end <= start {
			return nil
		}
		if string(name) == key {
			return obj[start:end:end]
		}
		if i = skipSpace(obj, end); i >= len(obj) || obj[i] != ',' {
			return nil
		}
	}
	return nil
}

// OnlyValue is the value of the only member of obj, a JSON object the
// server made itself with one member (an operation's data of one field),
// found without reading the value: what lies between the member's colon
// and the object's end. It is null when obj has no member.
func OnlyValue(obj []byte) []byte {
	obj = bytes.TrimRight(obj, " \t\n\r")
	i := skipSpace(obj, 0)
	if len(obj) < 2 || obj[i] != '{' || obj[len(obj)-1] != '}' {
		return []byte("null")
	}
	i = skipSpace(obj, i+1)
	if end := skipValue(obj, i); end > i && obj[i] == '"' {
		if i = skipSpace(obj, end); i < len(obj) && obj[i] == ':' {
			v := bytes.TrimRight(obj[skipSpace(obj, i+1):len(obj)-1], " \t\n\r")
			return v[:len(v):len(v)] // appending to it copies it
		}
	}
	return []byte("null")
}

type member struct {
	key   string // decoded
	value []byte
}

// sortedValue appends v, exactly one JSON value, as json.Marshal writes
// what it decodes to.
func sortedValue(dst, v []byte) ([]byte, error) {
	switch v[0] {
	case '{':
		return sortedObject(dst, v)
	case '[':
		dst = append(dst, '[')
		n := 0
		for i := skipSpace(v, 1); i < len(v) && v[i] != ']'; n++ {
			end := skipValue(v, i)
			if end == i {
				return nil, errors.New("rawjson: invalid array")
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = sortedValue(dst, v[i:end]); err != nil {
				return nil, err
			}
			if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
				i = skipSpace(v, i+1)
			}
		}
		return append(dst, ']'), nil
	case '"':
		if verbatim(v) {
			return append(dst, v...), nil
		}
		str, err := unquote(v)
		if err != nil {
			return nil, err
		}
		return appendString(dst, str), nil
	}
	return append(dst, v...), nil // a number, true, false or null, as UseNumber keeps it
}

// verbatim reports whether json.Marshal writes the string of the literal
// lit as lit is: printable ASCII only, nothing it escapes (no backslash,
// so no escape sequence to read either). Most stored strings are; a long
// one is then copied in one pass rather than decoded and encoded again.
func verbatim(lit []byte) bool {
	for _, c := range lit[1 : len(lit)-1] {
		if c >= utf8.RuneSelf || !safe[c] {
			return false
		}
	}
	return true
}

func sortedObject(dst, obj []byte) ([]byte, error) {
	var members []member
	sorted := true
	for i := skipSpace(obj, 1); i < len(obj) && obj[i] == '"'; {
		end := skipValue(obj, i)
		key, err := unquote(obj[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, errors.New("rawjson: invalid object")
		}
		start := skipSpace(obj, i+1)
		end = skipValue(obj, start)
		if end <= start {
			return nil, errors.New("rawjson: invalid object")
		}
		if n := len(members); n > 0 && members[n-1].key >= key {
			sorted = false
		}
		members = append(members, member{key, obj[start:end]})
		if i = skipSpace(obj, end); i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	if !sorted {
		slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		// A repeated key: decoding keeps its last value.
		kept := members[:0]
		for i, m := range members {
			if i+1 == len(members) || members[i+1].key != m.key {
				kept = append(kept, m)
			}
		}
		members = kept
	}
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendString(dst, m.key), ':')
		var err error
		if dst, err = sortedValue(dst, m.value); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// unquote is the string of a JSON string literal: its bytes between the
// quotes when it has no escapes and is valid UTF-8, else what
// encoding/json decodes (invalid UTF-8 becomes U+FFFD).
func unquote(lit []byte) (string, error) {
	inner := lit[1 : len(lit)-1]
	if !slices.Contains(inner, '\\') && utf8.Valid(inner) {
		return string(inner), nil
	}
	var str string
	err := json.Unmarshal(lit, &str)
	return str, err
}

// skipSpace is the index of the first byte of b[i:] that is not JSON
// whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString is the index just past the string literal starting at b[i]
// (a quote), i itself when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return i
		}
		j += q
		backslashes := 0
		for k := j - 1; k > i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1
		}
		j++
	}
}

// skipValue is the index just past the JSON value starting at b[i], found
// by matching quotes and brackets only (the value is not validated); i
// itself when no whole value starts there.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end == j {
					return i
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return i
	}
	j := i // a number, true, false or null: up to the next delimiter
	for j < len(b) && b[j] != ',' && b[j] != ':' && b[j] != '}' && b[j] != ']' && b[j] != ' ' &&
		b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

const hex = "0123456789abcdef"

// safe marks the ASCII bytes json.Marshal writes in a string as they are.
var safe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendString appends s as json.Marshal writes a string: quoted, with
// <, >, &, U+2028, U+2029 and control characters escaped and invalid UTF-8
// as U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && s[i] < utf8.RuneSelf && safe[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
			start = i + size
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}

// Leaves calls yield with the dotted path and the literal (a string still
// quoted) of each scalar of the JSON object obj, in the order written:
// objects are walked to dotted names ({"a": {"b": 1}}: a.b), an array's
// elements have the array's path, and of the members an object repeats
// only the last counts, as when obj is decoded. Keys are decoded. It
// answers false when obj is not a well-formed object (what it yielded
// before then stands) or yield stopped it. Values are not validated.
func Leaves(obj []byte, yield func(path string, lit []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	end := skipValue(obj, i)
	if end <= i {
		return false
	}
	return leaves(obj[i:end], "", yield)
}

// leaves walks the value v (an object, an array or a scalar) at path.
func leaves(v []byte, path string, yield func(path string, lit []byte) bool) bool {
	switch v[0] {
	case '{':
		type member struct {
			key   string
			value []byte
		}
		var members []member
		if !Members(v, func(key string, value []byte) bool {
			members = append(members, member{key, value})
			return true
		}) {
			return false
		}
		var last map[string]int // of a large object, each key's last member
		if len(members) > 16 {
			last = make(map[string]int, len(members))
			for n, m := range members {
				last[m.key] = n
			}
		}
	next:
		for n, m := range members {
			if last != nil {
				if last[m.key] != n {
					continue // decoding keeps the last
				}
			} else {
				for _, later := range members[n+1:] {
					if later.key == m.key {
						continue next
					}
				}
			}
			p := m.key
			if path != "" {
				p = path + "." + m.key
			}
			if !leaves(m.value, p, yield) {
				return false
			}
		}
		return true
	case '[':
		for i := skipSpace(v, 1); i < len(v) && v[i] != ']'; {
			end := skipValue(v, i)
			if end <= i {
				return false
			}
			if !leaves(v[i:end], path, yield) {
				return false
			}
			if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
				i = skipSpace(v, i+1)
			}
		}
		return true
	}
	return yield(path, v)
}
