package main

import (
	"math"
	"testing"
)

// One series of 100 rows (15 of probation) with two windows.
func series(detections ...int) []Scored {
	return []Scored{{Rows: 100, Windows: []Window{{40, 49}, {70, 79}}, Detections: detections}}
}

func TestNABScoresThePerfectDetector100AndTheNullDetector0(t *testing.T) {
	for _, p := range Profiles {
		if got := Normalised(series(40, 70), p); math.Abs(got-100) > 1e-9 {
			t.Errorf("%s: perfect = %v", p.Name, got)
		}
		if got := Normalised(series(), p); got != 0 {
			t.Errorf("%s: null = %v", p.Name, got)
		}
	}
}

func TestNABByHand(t *testing.T) {
	std := Profiles[0]
	// A detection in the middle of the first window: position -(49-45+1)/10 = -0.5,
	// sigma = 2/(1+e^-2.5) - 1 = 0.848284, weighted 0.848284/0.986614 = 0.859791.
	// The second window is missed: -1. Null: -2, perfect: +2.
	want := 100 * (0.859791 - 1 + 2) / 4
	if got := Normalised(series(45), std); math.Abs(got-want) > 1e-3 {
		t.Fatalf("one TP in the middle: %v, want %v", got, want)
	}
	// A false positive 2 widths (9 rows each) past the first window: sigma(2) = -0.999909 x 0.11.
	// Two perfect detections with it: raw 2 - 0.109990.
	want = 100 * (2 - 0.109990 + 2) / 4
	if got := Normalised(series(40, 67, 70), std); math.Abs(got-want) > 1e-3 {
		t.Fatalf("a false positive: %v, want %v", got, want)
	}
	// Before any window a false positive costs A_FP; in probation nothing.
	want = 100 * (2 - 0.11 + 2) / 4
	if got := Normalised(series(20, 40, 70), std); math.Abs(got-want) > 1e-9 {
		t.Fatalf("an early false positive: %v, want %v", got, want)
	}
	if got := Normalised(series(5, 40, 70), std); math.Abs(got-100) > 1e-9 {
		t.Fatalf("a detection in probation: %v, want 100", got)
	}
}

func TestNABOrdering(t *testing.T) {
	std := Profiles[0]
	early, late := Normalised(series(41, 70), std), Normalised(series(48, 70), std)
	if !(early > late && late > Normalised(series(70), std)) {
		t.Fatalf("early %v, late %v, missed %v", early, late, Normalised(series(70), std))
	}
	// Later detections in a window add nothing; a false positive right after a
	// window costs less than one far away; low_FP punishes it more.
	if Normalised(series(41, 45, 48, 70), std) != early {
		t.Fatal("extra detections in a window changed the score")
	}
	near, far := Normalised(series(40, 51, 70), std), Normalised(series(40, 65, 70), std)
	if !(near > far && far < 100) {
		t.Fatalf("near FP %v, far FP %v", near, far)
	}
	if Normalised(series(40, 65, 70), Profiles[1]) >= far {
		t.Fatal("reward_low_FP_rate does not punish a false positive more")
	}
	// reward_low_FN_rate: a miss costs 2, so one found window of two scores more than half.
	if got := Normalised(series(40), Profiles[2]); math.Abs(got-100*(1-2+4)/6) > 1e-9 {
		t.Fatalf("low_FN one of two: %v", got)
	}
}
