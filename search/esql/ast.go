// Package esql parses the subset of ES|QL that the embedded PostgreSQL
// search backend answers into an AST. It knows nothing of SQL or of data
// owners: search/pg translates the AST, and the scope check of package search
// runs before either. Errors are *Error values carrying the position of the
// offending text.
package esql

import "fmt"

// Pos is a position in the query text: 1-based line and column, and the
// byte offset.
type Pos struct {
	Line, Col, Offset int
}

func (p Pos) String() string { return fmt.Sprintf("line %d:%d", p.Line, p.Col) }

// Error is a syntax error or a construct outside the supported subset.
type Error struct {
	Pos Pos
	Msg string
	// Unsupported is set when the query is valid ES|QL that this package
	// does not answer (ENRICH, GROK, an unknown function, ...).
	Unsupported bool
}

func (e *Error) Error() string {
	if e.Unsupported {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Query is a parsed pipeline: a FROM followed by processing commands.
type Query struct {
	From     *From
	Commands []Command
}

// Command is one processing command after FROM.
type Command interface {
	Position() Pos
	command()
}

// From is the source command. Indices holds the index patterns as written
// (quotes removed); Exclude marks patterns written with a leading '-'.
type From struct {
	At       Pos
	Indices  []IndexPattern
	Metadata []string
}

// IndexPattern is one index expression of FROM.
type IndexPattern struct {
	Pattern string
	Exclude bool
	At      Pos
}

// Where keeps the rows for which Cond is true.
type Where struct {
	At   Pos
	Cond Expr
}

// Eval appends (or replaces) computed columns, in order.
type Eval struct {
	At     Pos
	Fields []Field
}

// Stats aggregates: one row per group of By (one row in all without By).
type Stats struct {
	At   Pos
	Aggs []Field
	By   []Field
}

// Sort orders the rows.
type Sort struct {
	At     Pos
	Orders []Order
}

// Limit keeps the first N rows.
type Limit struct {
	At Pos
	N  int64
}

// Keep keeps the named columns (patterns may contain '*').
type Keep struct {
	At       Pos
	Patterns []string
}

// Drop removes the named columns (patterns may contain '*').
type Drop struct {
	At       Pos
	Patterns []string
}

// Rename renames columns: each pair is old → new.
type Rename struct {
	At    Pos
	Pairs []RenamePair
}

// LookupJoin is "LOOKUP JOIN index ON field[, field...]": it adds the
// fields of the lookup index's document whose join fields equal the row's
// (nulls when none does). Index is the name as written (quotes removed).
type LookupJoin struct {
	At      Pos
	Index   string
	IndexAt Pos
	On      []string
}

// RenamePair is one "old AS new".
type RenamePair struct {
	Old, New string
}

func (c *Where) Position() Pos      { return c.At }
func (c *Eval) Position() Pos       { return c.At }
func (c *Stats) Position() Pos      { return c.At }
func (c *Sort) Position() Pos       { return c.At }
func (c *Limit) Position() Pos      { return c.At }
func (c *Keep) Position() Pos       { return c.At }
func (c *Drop) Position() Pos       { return c.At }
func (c *Rename) Position() Pos     { return c.At }
func (c *LookupJoin) Position() Pos { return c.At }

func (*Where) command()      {}
func (*Eval) command()       {}
func (*Stats) command()      {}
func (*Sort) command()       {}
func (*Limit) command()      {}
func (*Keep) command()       {}
func (*Drop) command()       {}
func (*Rename) command()     {}
func (*LookupJoin) command() {}

// Field is a named expression: "name = expr", or an unnamed expression whose
// name is its source text (as ES|QL names such columns).
type Field struct {
	Name string
	Expr Expr
	// Where is the condition of a STATS aggregate (STATS c = COUNT(*)
	// WHERE x > 1): only the rows meeting it are aggregated.
	Where Expr
}

// Order is one SORT key.
type Order struct {
	Expr Expr
	Desc bool
	// NullsFirst is the effective null placement: ES|QL puts nulls last
	// ascending and first descending unless NULLS FIRST|LAST says otherwise.
	NullsFirst bool
}

// Expr is an expression node.
type Expr interface {
	Position() Pos
	expr()
}

// LitKind is the type of a literal.
type LitKind int

const (
	LitNull LitKind = iota
	LitBool
	LitInt
	LitFloat
	LitString
	LitDuration
	LitMulti // a multi-value literal [1, 2, 3]: Value is []any of one kind's values
)

// Literal is a constant. Value holds nil, bool, int64, float64 or string;
// for LitDuration, Value is the count (int64) and Unit the canonical unit
// (millisecond, second, minute, hour, day, week, month, quarter, year).
type Literal struct {
	At    Pos
	Kind  LitKind
	Value any
	Unit  string
}

// Ident is a column (field) reference, dotted path as written.
type Ident struct {
	At   Pos
	Name string
}

// Call is a function call; Name is upper case. Star marks COUNT(*).
type Call struct {
	At   Pos
	Name string
	Args []Expr
	Star bool
}

// Binary is an arithmetic, comparison or boolean operator: one of
// + - * / % == != < <= > >= AND OR ("=" is read as "==").
type Binary struct {
	At   Pos
	Op   string
	L, R Expr
}

// Unary is NOT or unary minus.
type Unary struct {
	At Pos
	Op string // "NOT" or "-"
	X  Expr
}

// IsNull is "x IS NULL" (Not: IS NOT NULL).
type IsNull struct {
	At  Pos
	X   Expr
	Not bool
}

// Like is "x [NOT] LIKE pattern" or, with Regex, RLIKE.
type Like struct {
	At      Pos
	X       Expr
	Pattern string
	// Patterns are all the patterns of x LIKE ("a*", "b*"): x matches any
	// of them (Pattern is the first).
	Patterns []string
	Regex    bool
	Not      bool
}

// In is "x [NOT] IN (list)".
type In struct {
	At   Pos
	X    Expr
	List []Expr
	Not  bool
}

// Cast is "x::type"; Type is lower case (integer, long, double, keyword,
// text, datetime, date, boolean).
type Cast struct {
	At   Pos
	X    Expr
	Type string
}

func (e *Literal) Position() Pos { return e.At }
func (e *Ident) Position() Pos   { return e.At }
func (e *Call) Position() Pos    { return e.At }
func (e *Binary) Position() Pos  { return e.At }
func (e *Unary) Position() Pos   { return e.At }
func (e *IsNull) Position() Pos  { return e.At }
func (e *Like) Position() Pos    { return e.At }
func (e *In) Position() Pos      { return e.At }
func (e *Cast) Position() Pos    { return e.At }

func (*Literal) expr() {}
func (*Ident) expr()   {}
func (*Call) expr()    {}
func (*Binary) expr()  {}
func (*Unary) expr()   {}
func (*IsNull) expr()  {}
func (*Like) expr()    {}
func (*In) expr()      {}
func (*Cast) expr()    {}
