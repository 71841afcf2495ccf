package pg

// Keeping the planner's work linear in the length of a pipeline.
//
// Each EVAL column is a subquery level selecting "s.*, <expr> AS cN", and
// later commands refer to the column as s.cN, so the statement's text grows
// linearly. PostgreSQL, however, pulls simple subqueries up into their
// parent and replaces every reference to cN by a copy of its expression,
// and inlines fg_num, fg_time and the translator's bound values (bind) the
// same way. A chain of EVALs that each use the previous column once
// re-expands the whole chain at every level (quadratic and worse); one that
// uses it twice (x = x + x) doubles at every step. The planner does this
// without ever checking for cancellation: neither statement_timeout nor
// pg_terminate_backend stops it.
//
// So the translator estimates, for every EVAL column, the size its
// expression reaches once the planner has inlined it (inlinedSize), and
// before a column that would exceed maxInlinedSize it fences the relation
// built so far with OFFSET 0, which PostgreSQL never pulls up: above the
// fence, columns below it are plain references again. Ordinary pipelines
// stay below the bound and keep their plans (conditions pushed down to the
// documents' indexes); only long or self-multiplying chains get fences.

// maxInlinedSize bounds the estimated inlined size, in bytes of SQL text,
// of one EVAL column (and of the columns it is built from) between fences.
const maxInlinedSize = 8 << 10

// inlineFactor is how many copies of a referenced column one reference is
// counted as: fg_num reads its argument four times, bound values are read
// up to about as often. Over-counting only fences a little earlier.
const inlineFactor = 8

// inlinedSize estimates the size of sql once the planner has replaced the
// EVAL columns it refers to (s.cN, with a recorded size) by their
// expressions.
func (tr *esqlTranslator) inlinedSize(sql string) int {
	n := len(sql)
	for i := 0; i+3 < len(sql); i++ {
		if sql[i] != 's' || sql[i+1] != '.' || sql[i+2] != 'c' || (i > 0 && isSQLNameChar(sql[i-1])) {
			continue
		}
		j := i + 3
		for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		if j < len(sql) && isSQLNameChar(sql[j]) {
			continue
		}
		if w, ok := tr.inlined[sql[i+2:j]]; ok {
			n += inlineFactor * w
		}
		i = j - 1
	}
	return n
}

func isSQLNameChar(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// fenceIfHeavy fences the current relation when sql, over it, would
// inline to more than maxInlinedSize; it returns sql's size over the
// (possibly new) relation.
func (tr *esqlTranslator) fenceIfHeavy(sql string) int {
	n := tr.inlinedSize(sql)
	if n <= maxInlinedSize || len(tr.inlined) == 0 {
		return n
	}
	tr.from = "(SELECT * FROM " + tr.from + " s OFFSET 0)"
	clear(tr.inlined)
	return len(sql)
}

// recordInlined notes the inlined size of the EVAL column alias.
func (tr *esqlTranslator) recordInlined(alias string, size int) {
	if tr.inlined == nil {
		tr.inlined = map[string]int{}
	}
	tr.inlined[alias] = size
}
