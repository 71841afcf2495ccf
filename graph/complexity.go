package graph

// SetEntitiesComplexity prices Query._entities (Apollo Federation), whose
// ComplexityRoot field the federation plugin leaves unexported. Written by
// hand: go generate writes only generated.go and federation.go here.
func (c *ComplexityRoot) SetEntitiesComplexity(f func(childComplexity int, representations []map[string]any) int) {
	c.Query.__resolve_entities = f
}
