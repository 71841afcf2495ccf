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

// newRegistrationKey returns a random key that is easy to type.
func newRegistrationKey() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

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
