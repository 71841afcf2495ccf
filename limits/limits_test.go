package limits

import "testing"

func TestAdmissionSlots(t *testing.T) {
	for _, c := range []struct{ pool, slots, perOwner int }{{1, 1, 1}, {2, 1, 1}, {8, 6, 3}, {16, 12, 6}, {40, 30, 15}} {
		if s, p := AdmissionSlots(c.pool); s != c.slots || p != c.perOwner {
			t.Errorf("AdmissionSlots(%d) = %d, %d; want %d, %d", c.pool, s, p, c.slots, c.perOwner)
		}
	}
}
