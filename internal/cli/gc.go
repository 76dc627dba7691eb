package cli

import "runtime/debug"

// gcPercent is the collector's target (GOGC) of every hcpops process
// whose operator did not set GOGC.
//
// Why not Go's 100: what a tick keeps live is mostly the view of the
// active set (core/activeset), which holds no pointers, so marking it
// costs a collection little; but at GOGC=100 the heap grows to about
// twice what is live before each collection, and at 100,000 operations
// the unchanged tick's peak heap went over what #35 allows. 80 stayed too
// near that limit to hold; 75 stays under it, by a thin margin. The price
// is CPU: more collections a tick, and a somewhat slower unchanged tick.
// Figures and how they were measured:
// docs/decisions/active-set-view.md#the-collectors-target.
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
