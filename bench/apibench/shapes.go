package main

import (
	"encoding/json"
	"errors"
)

// fleetgraphClients reads {"data":{"client":{…}}} or {"data":{"clients":[…]}}.
func fleetgraphClients(body []byte) ([]normClient, error) {
	type client struct {
		gqlClient
		RegistrationKey    *gqlKey    `json:"registrationKey"`
		ClientGroups       []gqlGroup `json:"clientGroups"`
		CurrentIspContract *struct {
			gqlContract
			IspName string `json:"ispName"`
		} `json:"currentIspContract"`
	}
	var resp struct {
		Data *struct {
			Client  *client  `json:"client"`
			Clients []client `json:"clients"`
		} `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := decode(body, &resp); err != nil {
		return nil, err
	}
	if resp.Errors != nil || resp.Data == nil {
		return nil, errors.New("errors: " + string(resp.Errors))
	}
	cs := resp.Data.Clients
	if resp.Data.Client != nil {
		cs = []client{*resp.Data.Client}
	}
	out := make([]normClient, len(cs))
	for i, c := range cs {
		out[i] = c.norm()
		out[i].Key = c.RegistrationKey.norm()
		out[i].Groups = normGroups(c.ClientGroups)
		if k := c.CurrentIspContract; k != nil {
			out[i].Contract = k.norm(k.IspName)
		}
	}
	return out, nil
}

// postgraphileClients reads {"data":{"clientById":{…}}} or
// {"data":{"allClients":{"nodes":[…]}}}.
func postgraphileClients(body []byte) ([]normClient, error) {
	type client struct {
		gqlClient
		RegistrationKey *gqlKey `json:"registrationKeyByRegistrationKeyId"`
		Members         struct {
			Nodes []struct {
				Group gqlGroup `json:"clientGroupByClientGroupId"`
			} `json:"nodes"`
		} `json:"clientGroupMembersByClientId"`
		Contracts struct {
			Nodes []struct {
				gqlContract
				Isp struct {
					Name string `json:"name"`
				} `json:"ispByIspId"`
			} `json:"nodes"`
		} `json:"ispContractsByClientId"`
	}
	var resp struct {
		Data *struct {
			ClientByID *client `json:"clientById"`
			AllClients *struct {
				Nodes []client `json:"nodes"`
			} `json:"allClients"`
		} `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := decode(body, &resp); err != nil {
		return nil, err
	}
	if resp.Errors != nil || resp.Data == nil {
		return nil, errors.New("errors: " + string(resp.Errors))
	}
	var cs []client
	if resp.Data.ClientByID != nil {
		cs = []client{*resp.Data.ClientByID}
	} else if resp.Data.AllClients != nil {
		cs = resp.Data.AllClients.Nodes
	}
	out := make([]normClient, len(cs))
	for i, c := range cs {
		out[i] = c.norm()
		out[i].Key = c.RegistrationKey.norm()
		gs := make([]gqlGroup, len(c.Members.Nodes))
		for j, m := range c.Members.Nodes {
			gs[j] = m.Group
		}
		out[i].Groups = normGroups(gs)
		if len(c.Contracts.Nodes) > 1 {
			return nil, errors.New("more than one contract without an end: the current one is ambiguous")
		}
		if len(c.Contracts.Nodes) == 1 {
			k := c.Contracts.Nodes[0]
			out[i].Contract = k.norm(k.Isp.Name)
		}
	}
	return out, nil
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return errors.New("not JSON: " + string(excerpt(body, 0)))
	}
	return nil
}
