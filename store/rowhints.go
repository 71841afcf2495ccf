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

// expectedRows is how many rows a read of sql with args is expected to answer
// (0: no hint), within maxHintRows.
func expectedRows(sql string, args []any) int {
	k, keys, ok := hintOf(sql, args)
	if !ok {
		return 0
	}
	rowHints.Lock()
	h, found := rowHints.lru.Get(k)
	rowHints.Unlock()
	if !found {
		return 0
	}
	n := h.rows
	if keys > 0 && h.keys > 0 {
		n = h.rows * keys / h.keys
	}
	n += n/16 + 1 // room for a few more than last time
	return min(n, maxHintRows)
}

// rowsToHold is the capacity to collect r's rows into: what its hint
// expects, within maxHintBytes.
func rowsToHold[R any](r Read[R]) int {
	size := max(1, int(unsafe.Sizeof(*new(R))))
	return min(expectedRows(r.sql, r.args), maxHintBytes/size)
}

// noteRows remembers that r answered n rows.
func noteRows(sql string, args []any, n int) {
	k, keys, ok := hintOf(sql, args)
	if !ok || (keys == 0 && k.owner == 0 && n == 0) {
		return
	}
	rowHints.Lock()
	rowHints.lru.Add(k, rowHint{rows: n, keys: keys})
	rowHints.Unlock()
}
