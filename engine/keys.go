package engine

import (
	"time"

	"github.com/fleetgraph/fleetgraph/model"
)

// Key functions of the edges (edgetable.go).

func ispID(i *model.Isp) int64                         { return i.ID }
func contractIspID(c *model.IspContract) int64         { return c.IspID }
func contractClientID(c *model.IspContract) int64      { return c.ClientID }
func capabilityID(c *model.Capability) int64           { return c.ID }
func registrationKeyID(k *model.RegistrationKey) int64 { return k.ID }
func keyCapabilityID(k *model.RegistrationKey) int64   { return k.CapabilityID }
func clientID(c *model.Client) int64                   { return c.ID }

// currentContract picks the contract valid now (the list is newest first).
func currentContract(cs []model.IspContract) *model.IspContract {
	now := time.Now()
	for i, c := range cs {
		if !c.ValidFrom.After(now) && (c.ValidUntil == nil || c.ValidUntil.After(now)) {
			return &cs[i]
		}
	}
	return nil
}

func clientUUID(c *model.Client) string  { return c.UUID }
func webhookID(w *model.Webhook) int64   { return w.ID }
func groupID(g *model.ClientGroup) int64 { return g.ID }
func userID(u *model.User) int64         { return u.ID }
