package ocm

import (
	"regexp"
	"testing"
)

// segmentPattern is the rule validSegment implements, as a regular
// expression for the test to hold it to.
var segmentPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

var segmentSeeds = []string{"", "a", "Z9", "0abc", "abc-def_1", "-a", "_a", "a.b", "a/b", "a b", "a?x", "é", "a\x00", "a\n", "2qrppk0otds3rdmdcojqcqkqq8f0s591"}

func TestValidSegment(t *testing.T) {
	for _, s := range segmentSeeds {
		if got, want := validSegment(s), segmentPattern.MatchString(s); got != want {
			t.Errorf("validSegment(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzValidSegment(f *testing.F) {
	for _, s := range segmentSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validSegment(s), segmentPattern.MatchString(s); got != want {
			t.Fatalf("validSegment(%q) = %v, want %v", s, got, want)
		}
	})
}
