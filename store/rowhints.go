package store

import (
	"sync"
	"unsafe"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Row hints: how many rows a read answered last time, so that the next
// read of its kind collects its rows into a slice made the right size at
// once. Collected by doubling, a 2,000-client list's rows (a few MB) were
// allocated and copied about twice over, garbage that the collector then
// paid for (issue 28: a quarter of the REST list's allocations).
//
// A read by keys (an edge's read: its first slice argument) is remembered
// as rows per key, whatever the data owner; a read of a data owner's rows
// (a root list) per owner. A hint never asks for more than maxHintRows
// rows or maxHintBytes.

// maxHintRows and maxHintBytes bound a hint: past them, the slice grows
// by doubling again.
const (
	maxHintRows  = 1 << 14
	maxHintBytes = 8 << 20
)

type hintKey struct {
	sql   string
	owner int64 // 0 for a read by keys
}

type rowHint struct{ rows, keys int }

var rowHints = struct {
	sync.Mutex
	lru *simplelru.LRU[hintKey, rowHint]
}{lru: must(simplelru.NewLRU[hintKey, rowHint](4096, nil))}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// hintOf is the key of r's hint and r's number of keys (0: not a read by
// keys; the key is then its owner's, and ok false when it has none).
func hintOf(sql string, args []any) (k hintKey, keys int, ok bool) {
	k.sql = sql
	for _, a := range args {
		switch v := a.(type) {
		case []int64:
			return k, len(v), true
		case []string:
			return k, len(v), true
		}
	}
	if len(args) > 0 {
		if owner, isInt := args[0].(int64); isInt {
			k.owner = owner
			return k, 0, true
		}
	}
	return k, 0, false
}

// readHint is a read's hint as looked up once for the read: its key, and
// what was last noted under it.
type readHint struct {
	key   hintKey
	keys  int
	ok    bool // the read has a key (hintOf)
	last  rowHint
	found bool
}

// hintFor looks up the hint of a read of sql with args; the read sizes
// its rows by it (rowsToHold) and notes how many it got through it.
func hintFor(sql string, args []any) readHint {
	var h readHint
	if h.key, h.keys, h.ok = hintOf(sql, args); h.ok {
		rowHints.Lock()
		h.last, h.found = rowHints.lru.Get(h.key)
		rowHints.Unlock()
	}
	return h
}

// expectedRows is how many rows the read is expected to answer (0: no
// hint), within maxHintRows.
func (h readHint) expectedRows() int {
	if !h.found {
		return 0
	}
	n := h.last.rows
	if h.keys > 0 && h.last.keys > 0 {
		n = h.last.rows * h.keys / h.last.keys
	}
	n += n/16 + 1 // room for a few more than last time
	return min(n, maxHintRows)
}

// rowsToHold is the capacity to collect rows of R into: what h expects,
// within maxHintBytes.
func rowsToHold[R any](h readHint) int {
	size := max(1, int(unsafe.Sizeof(*new(R))))
	return min(h.expectedRows(), maxHintBytes/size)
}

// note remembers that the read answered n rows (nothing to write when
// that is what was noted already: the lookup made it the most recent).
func (h readHint) note(n int) {
	if !h.ok || (h.keys == 0 && h.key.owner == 0 && n == 0) {
		return
	}
	if h.found && h.last == (rowHint{rows: n, keys: h.keys}) {
		return
	}
	rowHints.Lock()
	rowHints.lru.Add(h.key, rowHint{rows: n, keys: h.keys})
	rowHints.Unlock()
}
