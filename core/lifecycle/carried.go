package lifecycle

import (
	"fmt"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/state"
)

// What an update carries. An update is Succeeded only when CS's live
// object shows every change it asked for: the fields clusterPatch,
// nodePool.patch and externalAuth.patch send are compared with CS's
// object by the *SpecDiffers functions, and a requested change this
// backend cannot send CS is refused at dispatch, naming its field, rather
// than completed on the object's state alone. docs/arm.md lists both.

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

// versionUncarried refuses a version change: CS runs live, the resource
// asks for want, and this backend cannot carry a version change to CS.
// nil when CS runs what is asked.
func versionUncarried(noun, want, live string) *refusal {
	if versionRuns(want, live) {
		return nil
	}
	if live == "" {
		live = "no version it reports"
	}
	return invalid(noun, versionField, fmt.Sprintf("%q", want),
		fmt.Sprintf("Clusters Service runs %s, and this backend cannot carry a version change to Clusters Service", live))
}

// versionState is the poll's source for the version: Failed when the
// resource asks for a version change this backend cannot carry (an update
// an earlier hcpops sent CS without it), Succeeded otherwise.
func versionState(source, noun, want, live string) *state.OperationState {
	if r := versionUncarried(noun, want, live); r != nil {
		return state.NewOperationState(arm.ProvisioningStateFailed, r.body.Message).WithSource(source)
	}
	return state.NewOperationState(arm.ProvisioningStateSucceeded, "").WithSource(source)
}
