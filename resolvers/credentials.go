package resolvers

import (
	"strings"

	"github.com/fleetgraph/fleetgraph/configdoc"

	"github.com/fleetgraph/fleetgraph/apierr"
)

func service(fe apierr.FieldErrors, s *string) *string {
	if s == nil {
		return nil
	}
	if !configdoc.ServiceName.MatchString(*s) {
		fe.Add("service", "must be a lower-case identifier (a-z, 0-9, _; at most 64 characters)")
	}
	return s
}

// sealPassword encrypts a new password; blank or omitted keeps the stored one.
func (r *Resolver) sealPassword(fe apierr.FieldErrors, pw *string) []byte {
	if pw == nil || strings.TrimSpace(*pw) == "" {
		return nil
	}
	if len(*pw) > 1024 {
		fe.Add("password", "is too long (maximum is 1024 characters)")
		return nil
	}
	return r.Sealer.Seal(*pw)
}
