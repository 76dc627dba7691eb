package cli

import "runtime/debug"

// gcPercent is the collector's target (GOGC) of every hcpops process
// whose operator did not set GOGC.
//
// Why not Go's 100: what a tick keeps live is mostly the view of the
// active set (core/activeset), which holds no pointers, so marking it
// costs a collection little; but at GOGC=100 the heap grows to about
// twice what is live before each collection, and at 100,000 operations
// the unchanged tick's heap peaked at 108-111 MB. Measured on 2026-12-03
// (hcpopsctl bench -n 100000 -rounds 3, runs alternating, the highest of
// each run's rounds): GOGC=100 peaked at 108.3-109.7 MB with 12-13
// collections a tick; 80 at 97.8-99.1 MB with 16, too near 100 MB to
// hold; 75 at 95.0-95.7 MB with 17-18 (95.8-98.9 in seven runs later
// that day, alone on the machine: a thin margin). The price is CPU: over six rounds
// each, the unchanged tick's median was 21.6 µs an operation at 75 and
// 19.7 at 100 (the 1% tick's 20.2 and 20.0), on a host whose rounds
// varied by a fifth.
const gcPercent = 75

// setGC sets the collector's target to gcPercent unless GOGC is set (the
// runtime has then applied the operator's), and says whether it did.
// Main calls it first, for every hcpops binary.
func setGC(lookup func(string) (string, bool)) bool {
	if _, set := lookup("GOGC"); set {
		return false
	}
	debug.SetGCPercent(gcPercent)
	return true
}
