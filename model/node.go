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
	return DocumentGlobalID(typeName, strconv.FormatInt(id, 10))
}

// DocumentGlobalID is the global id of an object keyed by text (a
// document's id): "<type>:<key>" in unpadded base64url, like GlobalID.
func DocumentGlobalID(typeName, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(typeName + ":" + key))
}

// ParseGlobalID answers the type and key of a global id; ok is false when
// id is not one. The key is text; IntKey reads the key of a type with an
// integer id.
func ParseGlobalID(id string) (typeName, key string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil {
		return "", "", false
	}
	typeName, key, found := strings.Cut(string(b), ":")
	if !found || typeName == "" || key == "" {
		return "", "", false
	}
	return typeName, key, true
}

// IntKey reads the key of a global id made by GlobalID; ok is false
// unless it is a positive integer written as GlobalID writes it.
func IntKey(key string) (n int64, ok bool) {
	n, err := strconv.ParseInt(key, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == key
}

func (c Client) NodeID() string          { return GlobalID("Client", c.ID) }
func (g ClientGroup) NodeID() string     { return GlobalID("ClientGroup", g.ID) }
func (i Isp) NodeID() string             { return GlobalID("Isp", i.ID) }
func (c Capability) NodeID() string      { return GlobalID("Capability", c.ID) }
func (k RegistrationKey) NodeID() string { return GlobalID("RegistrationKey", k.ID) }
func (u User) NodeID() string            { return GlobalID("User", u.ID) }
func (m Measurement) NodeID() string     { return DocumentGlobalID("Measurement", m.ID) }
func (a AnomalyEvent) NodeID() string    { return DocumentGlobalID("AnomalyEvent", a.ID) }
func (w Webhook) NodeID() string         { return GlobalID("Webhook", w.ID) }
