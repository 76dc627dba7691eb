package dst

import (
	"slices"
	"testing"
)

// Minimize narrows a failed seed to the fault windows it needs: each
// window in turn is left out, and stays out when the run still breaks a
// rule without it. It returns the windows left out and the narrowed
// run's result (res itself when none could go).
func Minimize(t *testing.T, res Result, opts Options) (dropped []int, narrowed Result) {
	narrowed = res
	for i := range res.Windows {
		try := opts
		try.Drop = append(slices.Clone(dropped), i)
		if r := Run(t, res.Seed, try); r.Failed() {
			dropped, narrowed = try.Drop, r
		}
	}
	return dropped, narrowed
}
