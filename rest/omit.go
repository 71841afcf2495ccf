package rest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// Absent is not null (@omitNull, ops/directives.graphqls).
//
// The specs type many fields as plain values and mark them optional: the key
// is absent when the value is not set. GraphQL answers null for what is not
// set, so a stored operation marks such a field @omitNull and the adapter
// drops the key from the answer when its value is null. The plan is made
// once per operation from its selection (fragments and aliases included), so
// a route whose operation marks nothing pays nothing.

// omitPlan is, for one level of the answer, the keys dropped when null and
// the plans of the levels below (per response key; a list applies the plan
// of its key to each element).
type omitPlan struct {
	omit map[string]bool
	next map[string]*omitPlan
}

// omitPlanOf makes the plan of a validated selection set; nil when it marks
// nothing. A mark on a non-null field is refused: it can never apply.
func omitPlanOf(set ast.SelectionSet) (*omitPlan, error) {
	p := &omitPlan{omit: map[string]bool{}, next: map[string]*omitPlan{}}
	if err := p.add(set); err != nil {
		return nil, err
	}
	return p.prune(), nil
}

// responseKey is the key a field's value has in the answer: its alias,
// else its name.
func responseKey(f *ast.Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

func (p *omitPlan) add(set ast.SelectionSet) error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			key := responseKey(s)
			if s.Directives.ForName("omitNull") != nil {
				if s.Definition != nil && s.Definition.Type.NonNull {
					return fmt.Errorf("field %s is marked @omitNull but is never null (%s)", key, s.Definition.Type)
				}
				p.omit[key] = true
			}
			if len(s.SelectionSet) > 0 {
				child := p.next[key]
				if child == nil {
					child = &omitPlan{omit: map[string]bool{}, next: map[string]*omitPlan{}}
					p.next[key] = child
				}
				if err := child.add(s.SelectionSet); err != nil {
					return err
				}
			}
		case *ast.InlineFragment:
			if err := p.add(s.SelectionSet); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if s.Definition != nil {
				if err := p.add(s.Definition.SelectionSet); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// prune drops the levels that mark nothing; nil when nothing is left.
func (p *omitPlan) prune() *omitPlan {
	for k, child := range p.next {
		if p.next[k] = child.prune(); p.next[k] == nil {
			delete(p.next, k)
		}
	}
	if len(p.omit) == 0 && len(p.next) == 0 {
		return nil
	}
	return p
}

// apply rewrites the JSON answer data without the planned null keys.
// Values the plan does not reach are copied byte for byte.
func (p *omitPlan) apply(data []byte) ([]byte, error) {
	if p == nil {
		return data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(data))
	if err := p.copy(dec, &out); err != nil {
		return nil, fmt.Errorf("omit null keys: %w", err)
	}
	return out.Bytes(), nil
}

// copy copies the next JSON value of dec to out, applying p to it.
func (p *omitPlan) copy(dec *json.Decoder, out *bytes.Buffer) error {
	if p == nil {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		out.Write(raw)
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := p.copy(dec, out); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case json.Delim('{'):
		out.WriteByte('{')
		first := true
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := keyTok.(string)
			var raw json.RawMessage
			if p.omit[key] {
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				if string(raw) == "null" {
					continue
				}
			}
			if !first {
				out.WriteByte(',')
			}
			first = false
			k, _ := json.Marshal(key)
			out.Write(k)
			out.WriteByte(':')
			if raw != nil {
				sub := &bytes.Buffer{}
				if err := p.next[key].copy(json.NewDecoder(bytes.NewReader(raw)), sub); err != nil {
					return err
				}
				out.Write(sub.Bytes())
				continue
			}
			if err := p.next[key].copy(dec, out); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	default:
		// A scalar where the plan expected an object or a list (null, say).
		b, _ := json.Marshal(tok)
		out.Write(b)
		return nil
	}
	_, err = dec.Token() // the closing delimiter
	return err
}
