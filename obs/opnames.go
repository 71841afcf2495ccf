package obs

import "sync"

// GraphQL operation names are chosen by clients, so the operation label is
// bounded: a name is kept only when it is a GraphQL name of at most
// maxOperationNameLen characters and one of the first MaxOperationNames
// distinct names of valid operations; anything else is folded into a fixed
// value.
const (
	// MaxOperationNames is how many distinct operation names one server
	// labels; later new names are OpOther.
	MaxOperationNames   = 200
	maxOperationNameLen = 64

	OpAnonymous = "anonymous" // an operation without a name
	OpInvalid   = "invalid"   // a name that is not a GraphQL name, or too long
	OpOther     = "other"     // past MaxOperationNames distinct names
	OpUnknown   = "unknown"   // a request refused before its operation was known (unparsable, over a limit)
)

type opNames struct {
	mu    sync.Mutex
	max   int
	names map[string]struct{}
}

func newOpNames(max int) *opNames { return &opNames{max: max, names: map[string]struct{}{}} }

// label is the metric label of the operation name; a new name is learned
// (kept from then on) only when learn is set, for operations that passed
// validation, so that refused documents cannot fill the set.
func (o *opNames) label(name string, learn bool) string {
	switch {
	case name == "":
		return OpAnonymous
	case len(name) > maxOperationNameLen || !GraphQLName(name):
		return OpInvalid
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.names[name]; ok {
		return name
	}
	if !learn {
		return OpUnknown
	}
	if len(o.names) >= o.max {
		return OpOther
	}
	o.names[name] = struct{}{}
	return name
}

// GraphQLName reports whether s is a GraphQL name, /[_A-Za-z][_0-9A-Za-z]*/:
// an operation's name here (a metric label), a field's alias in the
// engine's rendering (which JSON writes without escaping).
func GraphQLName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}
