package analyzer

import (
	"bytes"
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
