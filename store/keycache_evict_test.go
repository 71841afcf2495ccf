package store

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
	"time"
)

// TestAuthCacheEvicts: a full cache makes room by dropping the entries
// past their time first, and only when those are not an eighth of it,
// others at random; it is never emptied whole.
func TestAuthCacheEvicts(t *testing.T) {
	now := time.Now()
	digest := func(i int) []byte {
		d := sha256.Sum256(binary.BigEndian.AppendUint64(nil, uint64(i)))
		return d[:]
	}
	var c authCache[int]
	c.flush(true)
	gen, _ := c.generation()
	for i := range authCacheSize {
		at := now
		if i%2 == 0 {
			at = now.Add(-authCacheTTL) // past its time
		}
		c.put(digest(i), i, gen, at)
	}
	c.put(digest(-1), -1, gen, now)
	if n := len(c.entries); n != authCacheSize/2+1 {
		t.Fatalf("%d entries after the put into a full cache, want the %d fresh ones and the new one", n, authCacheSize/2)
	}
	for i := 1; i < authCacheSize; i += 2 {
		if _, ok := c.get(digest(i), now); !ok {
			t.Fatalf("fresh entry %d was dropped while stale ones made room", i)
		}
	}
	for i := authCacheSize; len(c.entries) < authCacheSize; i++ {
		c.put(digest(i), i, gen, now)
	}
	c.put(digest(-2), -2, gen, now)
	if n := len(c.entries); n != authCacheSize-authCacheSize/8+1 {
		t.Errorf("%d entries after the put into a cache full of fresh ones, want %d", n, authCacheSize-authCacheSize/8+1)
	}
	if _, ok := c.get(digest(-2), now); !ok {
		t.Error("the entry put last is not cached")
	}
}
