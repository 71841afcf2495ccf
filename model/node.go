package model

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// Node is an object with an opaque global id (schema/relay.graphqls).
type Node interface {
	NodeID() string
}

// GlobalID is the global id of the object of GraphQL type typeName with
// the integer id id: "<type>:<id>" in unpadded base64url, which callers
// are told not to parse.
func GlobalID(typeName string, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(typeName + ":" + strconv.FormatInt(id, 10)))
}

// ParseGlobalID answers the type and id of a global id; ok is false when
// id is not one.
func ParseGlobalID(id string) (typeName string, n int64, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return "", 0, false
	}
	typeName, num, found := strings.Cut(string(b), ":")
	if !found || typeName == "" {
		return "", 0, false
	}
	n, err = strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != num {
		return "", 0, false
	}
	return typeName, n, true
}

func (c Client) NodeID() string          { return GlobalID("Client", c.ID) }
func (g ClientGroup) NodeID() string     { return GlobalID("ClientGroup", g.ID) }
func (i Isp) NodeID() string             { return GlobalID("Isp", i.ID) }
func (c Capability) NodeID() string      { return GlobalID("Capability", c.ID) }
func (k RegistrationKey) NodeID() string { return GlobalID("RegistrationKey", k.ID) }
func (u User) NodeID() string            { return GlobalID("User", u.ID) }
