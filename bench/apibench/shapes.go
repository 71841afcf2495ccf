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
	data, err := graphqlData[struct {
		Client  *client  `json:"client"`
		Clients []client `json:"clients"`
	}](body)
	if err != nil {
		return nil, err
	}
	cs := data.Clients
	if data.Client != nil {
		cs = []client{*data.Client}
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
	data, err := graphqlData[struct {
		ClientByID *client `json:"clientById"`
		AllClients *struct {
			Nodes []client `json:"nodes"`
		} `json:"allClients"`
	}](body)
	if err != nil {
		return nil, err
	}
	var cs []client
	if data.ClientByID != nil {
		cs = []client{*data.ClientByID}
	} else if data.AllClients != nil {
		cs = data.AllClients.Nodes
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

// graphqlData decodes a GraphQL answer's data; errors fail.
func graphqlData[T any](body []byte) (*T, error) {
	var resp struct {
		Data   *T              `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, errors.New("not JSON: " + string(excerpt(body, 0)))
	}
	if resp.Errors != nil || resp.Data == nil {
		return nil, errors.New("errors: " + string(resp.Errors))
	}
	return resp.Data, nil
}
