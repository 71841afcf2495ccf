package model

// The Apollo Federation entities (schema/federation.graphqls): gqlgen's
// _Entity union takes the types that mark themselves so.

func (Client) IsEntity()          {}
func (ClientGroup) IsEntity()     {}
func (Measurement) IsEntity()     {}
func (AnomalyEvent) IsEntity()    {}
func (Isp) IsEntity()             {}
func (Capability) IsEntity()      {}
func (RegistrationKey) IsEntity() {}
