package analyzer

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzUnmarshalBinary: any bytes are refused or decode into a state that
// encodes to bytes decoding to the same state (the bytes themselves may
// differ: NaN payloads, non-minimal varints) and judges a value without
// panicking.
func FuzzUnmarshalBinary(f *testing.F) {
	r := rule("speedtest-download")
	s := NewState()
	for i, p := range series(300, noisy(20, 80, 0.1)) {
		if i == 250 {
			p.Value = -1
		}
		s.Observe(r, nil, p)
		if i%60 == 0 || i == 250 {
			b, _ := s.MarshalBinary()
			f.Add(b)
		}
	}
	f.Add([]byte{encodingVersion})
	f.Fuzz(func(t *testing.T, data []byte) {
		var st State
		if st.UnmarshalBinary(data) != nil {
			return
		}
		once, err := st.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var st2 State
		if err := st2.UnmarshalBinary(once); err != nil {
			t.Fatalf("its own encoding refused: %v", err)
		}
		if twice, _ := st2.MarshalBinary(); !bytes.Equal(once, twice) {
			t.Fatalf("encoded %x, then %x", once, twice)
		}
		st.Observe(r, nil, Point{At: t0.Add(1 << 50), Value: 50})
	})
}

// A state stored by the previous version (2, without the latest values
// unclipped) is read with the window's latest values standing in for
// them; everything else is as it was.
func TestVersion2StatesAreRead(t *testing.T) {
	r := rule("speedtest-download")
	s := NewState()
	for _, p := range series(200, noisy(12, 80, 0.05)) {
		s.Observe(r, nil, p)
	}
	b, _ := s.MarshalBinary()
	// Version 2's bytes: version 3's without the ring of latest values.
	d := decoder{b: b[1:]}
	var ring [window]float64
	d.varint()
	d.varint()
	d.ring(ring[:])
	from := len(b) - len(d.b)
	d.ring(ring[:])
	to := len(b) - len(d.b)
	v2 := append(append([]byte{2}, b[1:from]...), b[to:]...)

	var got State
	if err := got.UnmarshalBinary(v2); err != nil {
		t.Fatal(err)
	}
	for i := range shiftN {
		if got.recentRaw(i) != s.recent(i) {
			t.Fatalf("latest value %d: %v, the window's %v", i, got.recentRaw(i), s.recent(i))
		}
	}
	var v3 State
	if err := v3.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	got.latest, got.latestI = v3.latest, v3.latestI
	if !reflect.DeepEqual(got, v3) {
		t.Fatal("a version 2 state read differs from the state beyond its latest values")
	}
}
