package rest

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sort"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

//go:embed ops/*.graphql
var opFiles embed.FS

// operation is one stored GraphQL operation, ready to execute: its own
// document (the operation plus the fragments it uses) and its variables.
type operation struct {
	Name      string
	Document  string
	Variables ast.VariableDefinitionList
}

// loadOperations parses every stored operation, gives each its own document
// with the fragments it needs, and validates it against the schema.
func loadOperations(schema *ast.Schema) (map[string]*operation, error) {
	var all ast.QueryDocument
	err := fs.WalkDir(opFiles, "ops", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
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
		checked, errs := parseAndValidate(schema, buf.String())
		if errs != nil {
			return nil, fmt.Errorf("stored operation %s: %w", op.Name, errs)
		}
		ops[op.Name] = &operation{Name: op.Name, Document: buf.String(), Variables: checked.Operations[0].VariableDefinitions}
	}
	return ops, nil
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
