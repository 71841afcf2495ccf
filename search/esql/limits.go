package esql

import (
	"fmt"

	"github.com/fleetgraph/fleetgraph/limits"
)

// Limits of what one query may ask for (package limits: MaxCommands,
// MaxEvalColumns, MaxExprDepth, MaxExprNodes, MaxQueryNodes), checked by
// Parse before anything is compiled: the embedded backend turns every
// processing command and every EVAL column into one level of SQL, and
// PostgreSQL's planner cannot be interrupted while it expands expressions,
// so the size of what reaches it is bounded here (a query over a limit is
// a syntax-level error naming it).

// limitErr names a limit and its value.
func limitErr(at Pos, what string, limit int, name string) *Error {
	return &Error{Pos: at, Msg: fmt.Sprintf("query too large: more than %d %s (limit %s = %d)", limit, what, name, limit)}
}

// checkLimits verifies q against the limits of package limits.
func checkLimits(q *Query) *Error {
	if len(q.Commands) > limits.MaxCommands {
		return limitErr(q.Commands[limits.MaxCommands].Position(), "processing commands", limits.MaxCommands, "MaxCommands")
	}
	evalCols, nodes := 0, 0
	for _, c := range q.Commands {
		if e, ok := c.(*Eval); ok {
			evalCols += len(e.Fields)
			if evalCols > limits.MaxEvalColumns {
				return limitErr(e.At, "EVAL columns", limits.MaxEvalColumns, "MaxEvalColumns")
			}
		}
		for _, x := range commandExprs(c) {
			n, err := measure(x, 1)
			if err != nil {
				return err
			}
			if n > limits.MaxExprNodes {
				return limitErr(x.Position(), "nodes in one expression", limits.MaxExprNodes, "MaxExprNodes")
			}
			if nodes += n; nodes > limits.MaxQueryNodes {
				return limitErr(x.Position(), "expression nodes in the query", limits.MaxQueryNodes, "MaxQueryNodes")
			}
		}
	}
	return nil
}

// commandExprs lists the expressions of a command.
func commandExprs(c Command) []Expr {
	var out []Expr
	switch c := c.(type) {
	case *Where:
		out = append(out, c.Cond)
	case *Eval:
		for _, f := range c.Fields {
			out = append(out, f.Expr)
		}
	case *Stats:
		for _, f := range append(append([]Field(nil), c.Aggs...), c.By...) {
			out = append(out, f.Expr)
			if f.Where != nil {
				out = append(out, f.Where)
			}
		}
	case *Sort:
		for _, o := range c.Orders {
			out = append(out, o.Expr)
		}
	}
	return out
}

// measure counts the nodes of x, found at depth, refusing a depth over
// MaxExprDepth.
func measure(x Expr, depth int) (int, *Error) {
	if depth > limits.MaxExprDepth {
		return 0, limitErr(x.Position(), "levels of expression nesting", limits.MaxExprDepth, "MaxExprDepth")
	}
	var kids []Expr
	switch x := x.(type) {
	case *Binary:
		kids = []Expr{x.L, x.R}
	case *Unary:
		kids = []Expr{x.X}
	case *IsNull:
		kids = []Expr{x.X}
	case *Like:
		kids = []Expr{x.X}
	case *Cast:
		kids = []Expr{x.X}
	case *In:
		kids = append([]Expr{x.X}, x.List...)
	case *Call:
		kids = x.Args
	}
	n := 1
	for _, k := range kids {
		m, err := measure(k, depth+1)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}
