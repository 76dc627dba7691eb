package soak

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

func TestPlanCoversEveryRequestKind(t *testing.T) {
	plan := makePlan(300, 15*time.Second, sickPlan{every: 7, deadline: 10 * time.Second}, rand.New(rand.NewPCG(1, 0)))
	total := 0
	labels, clusters, subs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	wants := map[string]map[arm.ProvisioningState]bool{}
	for i, sc := range plan {
		total += sc.requests()
		if sc.start < 0 || sc.start >= 15*time.Second || (i > 0 && sc.start < plan[i-1].start) {
			t.Errorf("scenario %s starts at %s", sc.name, sc.start)
		}
		if subs[sc.subscription] {
			t.Errorf("subscription %s used twice", sc.subscription)
		}
		subs[sc.subscription] = true
		for _, st := range sc.stages {
			for _, r := range st {
				if labels[r.label] {
					t.Errorf("label %s used twice", r.label)
				}
				labels[r.label] = true
				if wants[r.kind] == nil {
					wants[r.kind] = map[arm.ProvisioningState]bool{}
				}
				for _, w := range r.want {
					wants[r.kind][w] = true
				}
			}
		}
		clusters[sc.name] = true
	}
	if total < 300 || total > 320 {
		t.Errorf("%d requests, want at least 300 in whole scenarios", total)
	}
	every := []string{"create cluster", "update cluster", "delete cluster", "create node pool", "update node pool", "delete node pool",
		"create external auth", "update external auth", "delete external auth", "request-credential", "revoke-credentials", kindSickCreate, kindSickPoolCreate}
	if got := kinds(plan); !slices.Equal(got, sortedStrings(every)) {
		t.Errorf("kinds = %v\nwant %v", got, sortedStrings(every))
	}
	// Failures designed in: a cluster that fails (two ways) and a node pool.
	if !wants["create cluster"][arm.ProvisioningStateFailed] || !wants["create node pool"][arm.ProvisioningStateFailed] {
		t.Errorf("no planned failures: %v", wants)
	}
	if !wants["update node pool"][arm.ProvisioningStateCanceled] {
		t.Error("no update superseded by a delete")
	}
	shapes := map[string]bool{}
	for _, sc := range plan {
		shapes[sc.shape] = true
	}
	for _, s := range append(slices.Clone(shapeCycle), sickShapes...) {
		if !shapes[s] {
			t.Errorf("no %s scenario", s)
		}
	}
	// The sick subset: every seventh scenario, a create with the short
	// deadline, named for the CS stand-in.
	sick := sickObjects(plan)
	if want := len(plan) / 7; sick.size() != want {
		t.Errorf("%d sick objects in %d scenarios, want %d", sick.size(), len(plan), want)
	}
	for _, sc := range plan {
		_, sickCluster := sick.clusters[sc.cluster]
		_, sickPool := sick.pools[sickPoolName(sc.name)]
		if _, sickShape := shapeSickness[sc.shape]; sickCluster == sickPool && sickShape || (sickCluster || sickPool) != sickShape {
			t.Errorf("scenario %s (%s): sick cluster %v, sick pool %v", sc.name, sc.shape, sickCluster, sickPool)
		}
		var deadlines []string
		for _, st := range sc.stages {
			for _, r := range st {
				if r.deadline > 0 {
					deadlines = append(deadlines, r.kind)
				}
			}
		}
		switch {
		case sickCluster && (len(sc.stages) != 1 || strings.Join(deadlines, ",") != kindSickCreate):
			t.Errorf("sick cluster scenario %s: %d stages, deadlines on %v", sc.name, len(sc.stages), deadlines)
		case sickPool && (len(sc.stages) != 2 || strings.Join(deadlines, ",") != kindSickPoolCreate):
			t.Errorf("sick pool scenario %s: %d stages, deadlines on %v", sc.name, len(sc.stages), deadlines)
		case !sickCluster && !sickPool && len(deadlines) > 0:
			t.Errorf("healthy scenario %s has deadlines on %v", sc.name, deadlines)
		}
	}
}

func TestPlanRepeatsWithItsSeed(t *testing.T) {
	subsOf := func(seed uint64) []string {
		var out []string
		for _, sc := range makePlan(50, time.Second, sickPlan{}, rand.New(rand.NewPCG(seed, 0))) {
			out = append(out, sc.subscription)
		}
		return out
	}
	if !slices.Equal(subsOf(3), subsOf(3)) {
		t.Error("the same seed made different plans")
	}
	if slices.Equal(subsOf(3), subsOf(4)) {
		t.Error("different seeds made the same plan")
	}
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// kinds lists the request kinds of a plan, sorted.
func kinds(plan []scenario) []string {
	seen := map[string]bool{}
	for _, sc := range plan {
		for _, st := range sc.stages {
			for _, r := range st {
				seen[r.kind] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
