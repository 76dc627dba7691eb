package clusterservice

import (
	"strings"
	"testing"
)

// TestCompareVersions: OpenShift versions ordered as semver, a
// pre-release (nightly, ec, rc) below its release; a value that is not a
// version is an error naming it.
func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int    // sign of the comparison
		bad  string // the value the error must name; "" when none
	}{
		{"4.20.10", "4.20.8", 1, ""},
		{"4.21.0", "4.20.25", 1, ""},
		{"4.21.0-rc.3", "4.21.0", -1, ""},
		{"4.21.0", "4.21.0-rc.3", 1, ""},
		{"4.21.0-rc.3", "4.21.0-rc.10", -1, ""},
		{"4.21.0-ec.2", "4.21.0-rc.1", -1, ""},
		{"4.21.0-0.nightly-2026-11-30-101010", "4.21.0-ec.1", -1, ""},
		{"4.21.0-0.nightly-2026-11-30-101010", "4.20.25", 1, ""},
		{"4.21.0-rc.3", "4.20.30", 1, ""},
		{"4.20.8", "4.20.8", 0, ""},
		{"4.21", "4.21.0", 0, ""},
		{"4.21.1", "latest", 0, "latest"},
		{"4.x.1", "4.21.1", 0, "4.x.1"},
		{"", "4.21.1", 0, `""`},
	} {
		t.Run(tc.a+" vs "+tc.b, func(t *testing.T) {
			got, err := CompareVersions(tc.a, tc.b)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("CompareVersions(%q, %q) error = %v, want one naming %s", tc.a, tc.b, err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sign(got) != tc.want {
				t.Errorf("CompareVersions(%q, %q) = %d, want sign %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
