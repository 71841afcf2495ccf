package pg

import (
	"encoding/json"
	"strings"

	"github.com/fleetgraph/fleetgraph/rawjson"
	"github.com/fleetgraph/fleetgraph/search"
)

// _source filtering of hits (includes and excludes with * patterns).

// srcFilter is the _source clause: nil keeps everything.
type srcFilter struct {
	none               bool
	includes, excludes []string
}

func stringList(v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{t}, nil
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, search.Badf("_source patterns must be strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, search.Badf("_source patterns must be a string or a list")
}

func parseSource(v any) (*srcFilter, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if t {
			return nil, nil
		}
		return &srcFilter{none: true}, nil
	case string, []any:
		inc, err := stringList(t)
		return &srcFilter{includes: inc}, err
	case map[string]any:
		f := &srcFilter{}
		var err error
		for k, x := range t {
			switch k {
			case "includes", "include":
				if f.includes, err = stringList(x); err != nil {
					return nil, err
				}
			case "excludes", "exclude":
				if f.excludes, err = stringList(x); err != nil {
					return nil, err
				}
			default:
				return nil, search.Badf("unsupported _source option %q", k)
			}
		}
		return f, nil
	}
	return nil, search.Badf("bad _source")
}

// source is the _source of a hit from its stored text (jsonb): copied as
// bytes when nothing filters it (rawjson.Sorted writes what decoding and
// encoding it again wrote, at a fraction of the CPU: issue 16), else
// decoded and filtered.
func (f *srcFilter) source(text string) (any, error) {
	if f == nil {
		return rawjson.Sorted([]byte(text))
	}
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return f.apply(doc), nil
}

// apply filters one source document.
func (f *srcFilter) apply(doc map[string]any) map[string]any {
	if f == nil {
		return doc
	}
	if f.none {
		return nil
	}
	return f.filter(doc, "", len(f.includes) == 0)
}

func (f *srcFilter) filter(obj map[string]any, prefix string, included bool) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		p := prefix + k
		if globMatchAny(f.excludes, p) {
			continue
		}
		inc := included || globMatchAny(f.includes, p)
		switch t := v.(type) {
		case map[string]any:
			sub := f.filter(t, p+".", inc)
			if len(sub) > 0 || (inc && len(t) == 0) {
				out[k] = sub
			}
		case []any:
			if inc {
				out[k] = f.filterList(t, p+".", true)
			} else if l := f.filterList(t, p+".", false); len(l) > 0 {
				out[k] = l
			}
		default:
			if inc {
				out[k] = v
			}
		}
	}
	return out
}

func (f *srcFilter) filterList(l []any, prefix string, included bool) []any {
	out := make([]any, 0, len(l))
	for _, v := range l {
		if m, ok := v.(map[string]any); ok {
			if sub := f.filter(m, prefix, included); len(sub) > 0 || included {
				out = append(out, sub)
			}
		} else if included {
			out = append(out, v)
		}
	}
	return out
}
