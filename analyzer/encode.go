package analyzer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// encodingVersion is the first byte of an encoded State. Version 3 adds
// the latest residuals unclipped; a version 2 state is read with them
// taken from its window. A state of another version is refused by
// UnmarshalBinary; the caller starts over with NewState (the client's
// baseline is learnt again).
const encodingVersion = 3

// ErrVersion is UnmarshalBinary's answer to a state of another version.
var ErrVersion = errors.New("analyzer: state of another encoding version")

// maxString bounds every string of a decoded state (ids, reasons).
const maxString = 4096

// MarshalBinary encodes the state: a version byte, then every field; the
// numbers kept from value to value as 4-byte floats (they are float32
// values already, see f32), the tail up to its last nonzero bin.
func (s *State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, encodingVersion)
	b = binary.AppendVarint(b, s.points)
	b = binary.AppendVarint(b, s.last)
	b = appendRing(b, s.win[:], s.winN, s.winI)
	b = appendRing(b, s.latest[:], min(s.winN, shiftN), s.latestI)
	b = appendRing(b, s.gaps[:], s.gapN, s.gapI)
	for _, h := range s.profile {
		b = appendFloat32(b, h.mean)
		b = binary.AppendUvarint(b, uint64(h.n))
	}
	bins := len(s.tail)
	for bins > 0 && s.tail[bins-1] == 0 {
		bins--
	}
	b = binary.AppendUvarint(b, uint64(bins))
	for _, f := range s.tail[:bins] {
		b = appendFloat32(b, f)
	}
	b = appendFloat32(b, s.tailTotal)
	b = binary.AppendUvarint(b, uint64(s.tailQueueN))
	for _, f := range s.tailQueue[:s.tailQueueN] {
		b = appendFloat32(b, f)
	}
	b = appendFloat32(b, s.cusum[0])
	b = appendFloat32(b, s.cusum[1])
	for i := range s.tracks {
		b = appendTrack(b, &s.tracks[i])
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (s *State) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		return errors.New("analyzer: empty state")
	}
	version := data[0]
	if version != encodingVersion && version != 2 {
		return fmt.Errorf("%w: %d", ErrVersion, version)
	}
	d := decoder{b: data[1:]}
	var n State
	n.points = d.varint()
	n.last = d.varint()
	n.winN, n.winI = d.ring(n.win[:])
	copy(n.sorted[:], n.win[:n.winN])
	slices.Sort(n.sorted[:n.winN])
	if version == 2 { // the window's latest values stand in for the unclipped ones
		k := min(n.winN, shiftN)
		for i := range k {
			n.latest[i] = n.win[(n.winI-k+i+window)%window]
		}
		n.latestI = k % shiftN
	} else {
		var k int
		if k, n.latestI = d.ring(n.latest[:]); k != min(n.winN, shiftN) {
			d.fail("latest residuals do not match the window")
		}
	}
	n.gapN, n.gapI = d.ring(n.gaps[:])
	for i := range n.profile {
		n.profile[i].mean = d.float32()
		n.profile[i].n = int(d.uvarint(math.MaxUint16))
	}
	bins := int(d.uvarint(tailBins))
	for i := range bins {
		n.tail[i] = d.float32()
	}
	n.tailTotal = d.float32()
	n.tailQueueN = int(d.uvarint(shiftN))
	for i := range n.tailQueueN {
		n.tailQueue[i] = d.float32()
	}
	n.cusum[0], n.cusum[1] = d.float32(), d.float32()
	for i := range n.tracks {
		d.track(&n.tracks[i])
	}
	if d.err != nil {
		return fmt.Errorf("analyzer: decode state: %w", d.err)
	}
	if len(d.b) != 0 {
		return errors.New("analyzer: decode state: trailing bytes")
	}
	*s = n
	return nil
}

func appendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendFloat32(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f)))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(b, 0)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

// appendRing encodes a ring's filled values, oldest first.
func appendRing(b []byte, ring []float64, n, next int) []byte {
	b = binary.AppendUvarint(b, uint64(n))
	start := (next - n + len(ring)) % len(ring)
	for i := range n {
		b = appendFloat32(b, ring[(start+i)%len(ring)])
	}
	return b
}

func appendTrack(b []byte, t *track) []byte {
	switch {
	case t.open:
		b = append(b, 1)
	case t.pending:
		b = append(b, 2)
		b = binary.AppendUvarint(b, uint64(t.pendingN))
	default:
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(t.calm))
	b = binary.AppendVarint(b, t.lastBad)
	b = appendFloat(b, t.ref)
	b = appendFloat(b, t.scale)
	b = binary.AppendUvarint(b, uint64(t.values))
	e := &t.ep
	b = appendString(b, e.ID)
	b = appendString(b, e.RuleID)
	b = appendString(b, string(e.Pass))
	b = appendString(b, string(e.Severity))
	b = appendTime(b, e.FirstSeen)
	b = appendTime(b, e.LastSeen)
	for _, f := range [...]float64{e.Value, e.Baseline, e.BandLow, e.BandHigh} {
		b = appendFloat(b, f)
	}
	b = appendString(b, e.Reason)
	b = binary.AppendUvarint(b, uint64(len(e.MeasurementIDs)))
	for _, id := range e.MeasurementIDs {
		b = appendString(b, id)
	}
	return b
}

// decoder reads what the append functions wrote; its first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint(limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.fail("bad or out of range count")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) float() float64 {
	if len(d.b) < 8 {
		d.fail("short float")
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return f
}

func (d *decoder) float32() float64 {
	if len(d.b) < 4 {
		d.fail("short float")
		return 0
	}
	f := math.Float32frombits(binary.LittleEndian.Uint32(d.b))
	d.b = d.b[4:]
	return float64(f)
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("short byte")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) string(limit int) string {
	n := int(d.uvarint(uint64(limit)))
	if len(d.b) < n {
		d.fail("short string")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) time() time.Time {
	ns := d.varint()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// ring decodes a ring written oldest first into ring, answering its
// count and next index.
func (d *decoder) ring(ring []float64) (n, next int) {
	n = int(d.uvarint(uint64(len(ring))))
	for i := range n {
		ring[i] = d.float32()
	}
	return n, n % len(ring)
}

func (d *decoder) track(t *track) {
	switch d.byte() {
	case 0:
		return
	case 1:
		t.open = true
	case 2:
		t.pending = true
		t.pendingN = int(d.uvarint(maxSpikeLen + 1))
	default:
		d.fail("bad track flag")
		return
	}
	t.calm = int(d.uvarint(math.MaxInt32))
	t.lastBad = d.varint()
	t.ref, t.scale = d.float(), d.float()
	t.values = int(d.uvarint(math.MaxInt32))
	e := &t.ep
	e.ID = d.string(maxString)
	e.RuleID = d.string(maxString)
	e.Pass = Pass(d.string(maxString))
	e.Severity = Severity(d.string(maxString))
	e.FirstSeen = d.time()
	e.LastSeen = d.time()
	e.Value, e.Baseline, e.BandLow, e.BandHigh = d.float(), d.float(), d.float(), d.float()
	e.Reason = d.string(maxString)
	n := int(d.uvarint(MaxMeasurementIDs))
	if n > 0 {
		e.MeasurementIDs = make([]string, n)
		for i := range n {
			e.MeasurementIDs[i] = d.string(maxString)
		}
	}
}
