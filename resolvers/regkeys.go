package resolvers

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"math"
	"strings"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/store"
)

// A probe registers with its registration key alone, before anyone knows
// its data owner, so keys are unique across data owners. That makes a
// taken key a 409 for whoever picks it again; what keeps the answer from
// telling one tenant about another's keys is the keys' length: generated
// keys carry 128 random bits, and a key of one's own choosing must be at
// least minKeyLength characters, so finding a taken key by trying is as
// hopeless as guessing it for registering.
const (
	generatedKeyBytes = 16 // 26 characters of base32
	minKeyLength      = 20
	maxKeyLength      = 128
)

// newRegistrationKey returns a random key that is easy to type.
func newRegistrationKey() string {
	b := make([]byte, generatedKeyBytes)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// customRegistrationKey checks a key of the caller's choosing.
func customRegistrationKey(fe apierr.FieldErrors, k string) string {
	k = strings.TrimSpace(k)
	switch {
	case len(k) < minKeyLength || len(k) > maxKeyLength:
		fe.Add("registrationKey", fmt.Sprintf("must be %d to %d characters long (leave it out for a generated one)",
			minKeyLength, maxKeyLength))
	case strings.IndexFunc(k, func(r rune) bool { return r < '!' || r > '~' }) >= 0:
		fe.Add("registrationKey", "must be printable ASCII without spaces")
	}
	return k
}

// errKeyTaken is the 409 of a registration key that exists already.
const errKeyTaken = "registration key is already taken: choose another or leave registrationKey out for a generated one"

func validateKeyLimits(fe apierr.FieldErrors, in store.RegistrationKeyInput) {
	if in.NumRegistrationsLeft != nil && *in.NumRegistrationsLeft < -1 {
		fe.Add("numRegistrationsLeft", "must be -1 (unlimited) or more")
	}
	if in.NumRegistrationsLeft != nil && *in.NumRegistrationsLeft > math.MaxInt32 { // an integer column
		fe.Add("numRegistrationsLeft", fmt.Sprintf("must be at most %d", math.MaxInt32))
	}
	intRange(fe, "usageLimitDays", in.UsageLimitDays, 1, 36500)
	if in.ValidFrom != nil && in.ValidUntil != nil && !in.ValidUntil.After(*in.ValidFrom) {
		fe.Add("validUntil", "must be after validFrom")
	}
}
