package rest

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

//go:embed ops/*.graphql ops/directives.graphqls
var opFiles embed.FS

// operation is one stored GraphQL operation, ready to execute: its own
// document (the operation plus the fragments it uses, without the REST
// directives of ops/directives.graphqls) and its variables.
type operation struct {
	Name     string
	Document string
	// Hash is the SHA-256 of Document in hex: the operation's key as a
	// persisted query on /graphql (Adapter.PersistedQueries).
	Hash      string
	Variables ast.VariableDefinitionList
	// Annotated is the operation as stored, REST directives included,
	// validated against the schema and its REST extension (field
	// definitions filled in): what the OpenAPI description is made from.
	Annotated *ast.OperationDefinition
	// omit lists the keys the answer drops when null (@omitNull).
	omit *omitPlan
}

// loadOperations parses every stored operation, gives each its own document
// with the fragments it needs, and validates it against the schema.
func loadOperations(schema *ast.Schema) (map[string]*operation, error) {
	annotatedSchema, err := withRESTDirectives(schema)
	if err != nil {
		return nil, err
	}
	var all ast.QueryDocument
	err = fs.WalkDir(opFiles, "ops", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".graphql") {
			return err
		}
		src, err := opFiles.ReadFile(path)
		if err != nil {
			return err
		}
		doc, perr := parser.ParseQuery(&ast.Source{Name: path, Input: string(src)})
		if perr != nil {
			return fmt.Errorf("parse %s: %w", path, perr)
		}
		all.Operations = append(all.Operations, doc.Operations...)
		all.Fragments = append(all.Fragments, doc.Fragments...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load stored operations: %w", err)
	}
	ops := make(map[string]*operation, len(all.Operations))
	for _, op := range all.Operations {
		doc := &ast.QueryDocument{Operations: ast.OperationList{op}}
		for _, name := range fragmentClosure(op.SelectionSet, all.Fragments) {
			doc.Fragments = append(doc.Fragments, all.Fragments.ForName(name))
		}
		var buf bytes.Buffer
		formatter.NewFormatter(&buf).FormatQueryDocument(doc)
		annotated, errs := parseAndValidate(annotatedSchema, buf.String())
		if errs != nil {
			return nil, fmt.Errorf("stored operation %s: %w", op.Name, errs)
		}
		omit, err := omitPlanOf(annotated.Operations[0].SelectionSet)
		if err != nil {
			return nil, fmt.Errorf("stored operation %s: %w", op.Name, err)
		}
		plain, _ := parser.ParseQuery(&ast.Source{Input: buf.String()}) // parsed above
		stripRESTDirectives(plain)
		buf.Reset()
		formatter.NewFormatter(&buf).FormatQueryDocument(plain)
		checked, errs := parseAndValidate(schema, buf.String())
		if errs != nil {
			return nil, fmt.Errorf("stored operation %s: %w", op.Name, errs)
		}
		sum := sha256.Sum256(buf.Bytes())
		ops[op.Name] = &operation{Name: op.Name, Document: buf.String(), Hash: hex.EncodeToString(sum[:]), Variables: checked.Operations[0].VariableDefinitions,
			Annotated: annotated.Operations[0], omit: omit}
	}
	return ops, nil
}

// restExtension is ops/directives.graphqls, parsed once.
var restExtension = sync.OnceValues(func() (*ast.SchemaDocument, error) {
	src, err := opFiles.ReadFile("ops/directives.graphqls")
	if err != nil {
		return nil, err
	}
	doc, perr := parser.ParseSchema(&ast.Source{Name: "ops/directives.graphqls", Input: string(src)})
	if perr != nil {
		return nil, fmt.Errorf("parse ops/directives.graphqls: %w", perr)
	}
	return doc, nil
})

// withRESTDirectives is schema with the directives of
// ops/directives.graphqls declared (a copy; schema is not changed).
func withRESTDirectives(schema *ast.Schema) (*ast.Schema, error) {
	ext, err := restExtension()
	if err != nil {
		return nil, err
	}
	out := *schema
	out.Directives = maps.Clone(schema.Directives)
	for _, d := range ext.Directives {
		if _, taken := out.Directives[d.Name]; taken {
			return nil, fmt.Errorf("ops/directives.graphqls: directive @%s is already declared by the schema", d.Name)
		}
		out.Directives[d.Name] = d
	}
	return &out, nil
}

// isRESTDirective: name is declared by ops/directives.graphqls.
func isRESTDirective(d *ast.Directive) bool {
	ext, _ := restExtension() // loaded by withRESTDirectives before
	return ext != nil && ext.Directives.ForName(d.Name) != nil
}

// stripRESTDirectives removes the REST directives from every selection of
// doc: the executor's schema does not declare them.
func stripRESTDirectives(doc *ast.QueryDocument) {
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				s.Directives = slices.DeleteFunc(s.Directives, isRESTDirective)
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		walk(f.SelectionSet)
	}
}

func parseAndValidate(schema *ast.Schema, src string) (*ast.QueryDocument, error) {
	doc, err := parser.ParseQuery(&ast.Source{Input: src})
	if err != nil {
		return nil, err
	}
	if errs := validator.ValidateWithRules(schema, doc, nil); errs != nil {
		return nil, errs
	}
	return doc, nil
}

// fragmentClosure lists the fragments a selection set uses, transitively.
func fragmentClosure(set ast.SelectionSet, frags ast.FragmentDefinitionList) []string {
	seen := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if !seen[s.Name] {
					seen[s.Name] = true
					if f := frags.ForName(s.Name); f != nil {
						walk(f.SelectionSet)
					}
				}
			}
		}
	}
	walk(set)
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
