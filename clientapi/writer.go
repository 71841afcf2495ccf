package clientapi

import (
	"context"
	"errors"
	"sync"

	"github.com/fleetgraph/fleetgraph/importer"
	"github.com/fleetgraph/fleetgraph/store"
)

// Grouping of concurrent reports (group commit).
const (
	// writersPerOwner is how many groups of one data owner are written at
	// the same time (fleetgraph import's default of writer goroutines).
	writersPerOwner = importer.DefaultWorkers
	// maxGroupDocs ends a group: later reports start the next one.
	maxGroupDocs = 5000
)

// writer stores the accepted documents of concurrent reports of one data
// owner together. A report's documents join the owner's group that is
// filling up; up to writersPerOwner groups of an owner are written at
// once, each by one importer.Store call (one transaction). A report that
// finds a writer free is written at once, alone; under load the reports
// that arrive while the writers are busy are written together when one
// is free, so the transactions per document fall as the load rises.
type writer struct {
	mu     sync.Mutex
	owners map[int64]*ownerWrites
}

// ownerWrites is one data owner's state: the groups being written and
// those waiting for a writer.
type ownerWrites struct {
	writing int
	waiting []*group
}

// group is documents of one or more reports written in one transaction.
type group struct {
	docs    []store.Document
	clients map[string]*string // client of each kind and id in docs
	bad     map[int]error      // refused documents, by index in docs
	err     error              // the write failed as a whole
	done    chan struct{}      // closed when written
}

func newGroup() *group {
	return &group{clients: map[string]*string{}, bad: map[int]error{}, done: make(chan struct{})}
}

// errIDInGroup refuses a document whose id another client's document of a
// concurrent report takes (the last copy of an id in a transaction wins).
var errIDInGroup = errors.New("a concurrent report of another client has a document of this id")

// add appends docs to g and answers their index in g.docs (-1 for a
// document refused with errIDInGroup).
func (g *group) add(docs []store.Document) []int {
	at := make([]int, len(docs))
	for i, d := range docs {
		key := d.Kind + "\x00" + d.DocID
		if cu, ok := g.clients[key]; ok && !sameClient(cu, d.ClientUUID) {
			at[i] = -1
			continue
		}
		g.clients[key] = d.ClientUUID
		at[i] = len(g.docs)
		g.docs = append(g.docs, d)
	}
	return at
}

func sameClient(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// write stores docs for the data owner (as importer.Store does) and
// answers the refused ones by index in docs.
func (w *writer) write(ctx context.Context, st *store.Store, ownerID int64, docs []store.Document) (map[int]error, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	w.mu.Lock()
	if w.owners == nil {
		w.owners = map[int64]*ownerWrites{}
	}
	o := w.owners[ownerID]
	if o == nil {
		o = &ownerWrites{}
		w.owners[ownerID] = o
	}
	if n := len(o.waiting); n == 0 || len(o.waiting[n-1].docs)+len(docs) > maxGroupDocs {
		o.waiting = append(o.waiting, newGroup())
	}
	g := o.waiting[len(o.waiting)-1]
	at := g.add(docs)
	var mine *group
	if o.writing < writersPerOwner {
		mine = o.take()
	}
	w.mu.Unlock()

	if mine != nil {
		// The write serves other reports too: it is not given up when
		// this report's client goes away.
		w.flush(context.WithoutCancel(ctx), st, ownerID, o, mine)
	}
	<-g.done
	if g.err != nil {
		return nil, g.err
	}
	bad := map[int]error{}
	for i, j := range at {
		if j < 0 {
			bad[i] = errIDInGroup
		} else if err, ok := g.bad[j]; ok {
			bad[i] = err
		}
	}
	return bad, nil
}

// take removes the oldest waiting group for a writer (w.mu held).
func (o *ownerWrites) take() *group {
	g := o.waiting[0]
	o.waiting = o.waiting[1:]
	o.writing++
	return g
}

// flush writes g, then hands the next waiting group, if any, to a new
// goroutine, so that this report's answer does not wait for it.
func (w *writer) flush(ctx context.Context, st *store.Store, ownerID int64, o *ownerWrites, g *group) {
	_, g.err = importer.StoreWith(ctx, st, ownerID, g.docs, store.InsertOptions{KeepOthers: true},
		func(i int, err error) { g.bad[i] = err })
	close(g.done)
	w.mu.Lock()
	defer w.mu.Unlock()
	o.writing--
	if len(o.waiting) > 0 {
		next := o.take()
		go w.flush(ctx, st, ownerID, o, next)
		return
	}
	if o.writing == 0 {
		delete(w.owners, ownerID)
	}
}
