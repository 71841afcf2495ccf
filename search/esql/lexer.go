package esql

import (
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent // `name`
	tInt
	tFloat
	tString
	tSym // punctuation and operators
)

type token struct {
	kind  tokKind
	text  string // identifier, symbol, number text or unquoted string
	start int    // byte offsets in the source
	end   int
}

// lex splits the query into tokens; comments and white space are dropped.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			// As in Elasticsearch, a line comment ends at '\n' or '\r'.
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, errAt(src, i, "unterminated comment")
			}
			i += 2 + j + 2
		case strings.HasPrefix(src[i:], `"""`):
			j := strings.Index(src[i+3:], `"""`)
			if j < 0 {
				return nil, errAt(src, i, "unterminated string")
			}
			toks = append(toks, token{kind: tString, text: src[i+3 : i+3+j], start: i, end: i + 6 + j})
			i += 6 + j
		case c == '"':
			t, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = t.end
		case c == '`':
			t, err := lexQuotedIdent(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i = t.end
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1]) && !prevGlues(toks, i)):
			t := lexNumber(src, i)
			toks = append(toks, t)
			i = t.end
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: src[i:j], start: i, end: j})
			i = j
		default:
			sym := ""
			for _, s := range []string{"::", "==", "!=", "<=", ">=", "=~"} {
				if strings.HasPrefix(src[i:], s) {
					sym = s
					break
				}
			}
			if sym == "" {
				if strings.IndexByte("|,()=<>+-*/%.:[]{}!?;", c) < 0 {
					r, _ := utf8.DecodeRuneInString(src[i:])
					return nil, errAt(src, i, "token recognition error at: '"+string(r)+"'")
				}
				sym = string(c)
			}
			toks = append(toks, token{kind: tSym, text: sym, start: i, end: i + len(sym)})
			i += len(sym)
		}
	}
	toks = append(toks, token{kind: tEOF, start: len(src), end: len(src)})
	return toks, nil
}

// lexString reads the double-quoted string starting at i (escapes \n, \t,
// \r, \", \\; it ends at the line's end).
func lexString(src string, i int) (token, error) {
	var b strings.Builder
	j := i + 1
	closed := false
	for j < len(src) {
		ch := src[j]
		if ch == '"' {
			closed = true
			j++
			break
		}
		if ch == '\n' || ch == '\r' {
			break
		}
		if ch == '\\' && j+1 < len(src) {
			switch src[j+1] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(src[j+1])
			default:
				return token{}, errAt(src, j, "invalid escape sequence \\"+string(src[j+1]))
			}
			j += 2
			continue
		}
		b.WriteByte(ch)
		j++
	}
	if !closed {
		return token{}, errAt(src, i, "unterminated string")
	}
	return token{kind: tString, text: b.String(), start: i, end: j}, nil
}

// lexQuotedIdent reads the backquoted identifier starting at i (“ is a
// literal backquote).
func lexQuotedIdent(src string, i int) (token, error) {
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		if src[j] == '`' {
			if j+1 < len(src) && src[j+1] == '`' {
				b.WriteByte('`')
				j += 2
				continue
			}
			return token{kind: tQuotedIdent, text: b.String(), start: i, end: j + 1}, nil
		}
		b.WriteByte(src[j])
		j++
	}
	return token{}, errAt(src, i, "unterminated quoted identifier")
}

// lexNumber reads the integer or decimal (with an optional exponent)
// starting at i.
func lexNumber(src string, i int) token {
	j := i
	kind := tInt
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	if j < len(src) && src[j] == '.' && (j+1 >= len(src) || !isIdentStart(src[j+1])) {
		kind = tFloat
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			kind = tFloat
			j = k
			for j < len(src) && isDigit(src[j]) {
				j++
			}
		}
	}
	return token{kind: kind, text: src[i:j], start: i, end: j}
}

// prevGlues reports whether the previous token ends exactly at i and is an
// identifier, so that "a.1" is not read as "a" ".1".
func prevGlues(toks []token, i int) bool {
	if len(toks) == 0 {
		return false
	}
	p := toks[len(toks)-1]
	return p.end == i && (p.kind == tIdent || p.kind == tQuotedIdent)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '@' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

// position converts a byte offset into a line:column position.
func position(src string, off int) Pos {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + strings.Count(src[:off], "\n")
	col := off + 1
	if k := strings.LastIndexByte(src[:off], '\n'); k >= 0 {
		col = off - k
	}
	return Pos{Line: line, Col: col, Offset: off}
}

func errAt(src string, off int, msg string) *Error {
	return &Error{Pos: position(src, off), Msg: msg}
}
