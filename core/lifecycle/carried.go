package lifecycle

import "strings"

// What an update carries. An update is Succeeded only when CS's live
// object shows every change it asked for: the fields clusterPatch,
// nodePool.patch and externalAuth.patch send are compared with CS's
// object by the *SpecDiffers functions, and a version change is carried
// by an upgrade (upgrade.go) and compared by versionRuns. A change CS
// cannot carry is refused at dispatch, naming its field, rather than
// completed on the object's state alone. docs/arm.md lists them.

// versionField is where a cluster or node pool asks for its version.
const versionField = "properties.version.id"

// versionRuns says whether CS runs the version asked for: a minor
// ("4.21", as a cluster asks) runs at any of its z-streams, a z-stream
// ("4.20.10", as a node pool asks) only exactly. Nothing asked runs.
func versionRuns(want, live string) bool {
	if want == "" {
		return true
	}
	return live == want || strings.HasPrefix(live, want+".") && strings.Count(want, ".") == 1
}
