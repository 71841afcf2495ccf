package store

import "testing"

// A read by keys expects rows in proportion to its keys, a read of an
// owner's rows what that owner's last one answered, and no hint goes past
// maxHintRows.
func TestRowHints(t *testing.T) {
	const byKeys = "SELECT ... WHERE c.data_owner_id = $1 AND c.client_id = ANY($2) -- TestRowHints"
	const byOwner = "SELECT ... WHERE c.data_owner_id = $1 -- TestRowHints"
	if n := hintFor(byKeys, []any{int64(1), []int64{1, 2}}).expectedRows(); n != 0 {
		t.Fatalf("a read never seen expects %d rows, want 0", n)
	}
	hintFor(byKeys, []any{int64(1), make([]int64, 2000)}).note(4000) // two rows a key
	if n := hintFor(byKeys, []any{int64(7), []int64{42}}).expectedRows(); n < 2 || n > 4 {
		t.Errorf("one key after two rows a key: %d rows expected, want 2 to 4", n)
	}
	if n := hintFor(byKeys, []any{int64(7), make([]int64, 500)}).expectedRows(); n < 1000 || n > 1100 {
		t.Errorf("500 keys after two rows a key: %d rows expected, want about 1,000", n)
	}
	hintFor(byOwner, []any{int64(1)}).note(2000)
	hintFor(byOwner, []any{int64(2)}).note(1)
	if n := hintFor(byOwner, []any{int64(1)}).expectedRows(); n < 2000 || n > 2200 {
		t.Errorf("owner 1 answered 2,000 rows; next time %d expected", n)
	}
	hintFor(byOwner, []any{int64(1)}).note(2000) // the same again: nothing written, the hint stays
	if n := hintFor(byOwner, []any{int64(1)}).expectedRows(); n < 2000 || n > 2200 {
		t.Errorf("owner 1 answered 2,000 rows twice; next time %d expected", n)
	}
	if n := hintFor(byOwner, []any{int64(2)}).expectedRows(); n > 2 {
		t.Errorf("owner 2 answered one row; next time %d expected, want at most 2", n)
	}
	if n := hintFor(byOwner, []any{int64(3)}).expectedRows(); n != 0 {
		t.Errorf("owner 3 never read: %d expected, want 0", n)
	}
	hintFor(byOwner, []any{int64(4)}).note(10 * maxHintRows)
	if n := hintFor(byOwner, []any{int64(4)}).expectedRows(); n != maxHintRows {
		t.Errorf("after %d rows: %d expected, want the bound %d", 10*maxHintRows, n, maxHintRows)
	}
	// Owner 1 answered 2,000 rows last time.
	if n := rowsToHold[[1 << 20]byte](hintFor(byOwner, []any{int64(1)})); n != maxHintBytes>>20 {
		t.Errorf("rows of a megabyte each: room for %d made, want %d (maxHintBytes)", n, maxHintBytes>>20)
	}
	if n := hintFor("SELECT now()", nil).expectedRows(); n != 0 {
		t.Errorf("a read of neither keys nor owner: %d expected, want 0", n)
	}
}
