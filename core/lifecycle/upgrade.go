package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/state"
	"github.com/hcpops/hcpops/core/store"
)

// Upgrades: a cluster's or node pool's version change, carried out the
// way upstream's version controllers do (backend/pkg/controllers/
// {cluster,nodepool}/version/). The version asked for is resolved to a
// z-stream from CS's versions (resolveTarget), CS is asked for it with an
// upgrade policy — only when the newest policy is not already for it, so
// a repeated dispatch posts none — and the update is Succeeded only once
// CS reports the object at that version. CS's failure of the upgrade fails
// it with CS's own words; the upgrade deadline is the update's own
// (updating.deadline).

// upgrades is what both kinds' upgrades share.
type upgrades struct {
	cs cs.Client
	// store holds the service-provider documents (serviceprovider.go).
	store store.Store
	clock func() time.Time
	// reads spaces an upgrade's policy reads (policyReads).
	reads *policyReads
}

// upgradeOf is one object's upgrade: its noun, the part upgraded (in
// messages) and its policies in CS.
type upgradeOf struct {
	noun, part string
	list       func(context.Context) ([]cs.UpgradePolicy, error)
	post       func(context.Context, string) (cs.UpgradePolicy, error)
}

func (u upgrades) controlPlane(href string) upgradeOf {
	return upgradeOf{noun: "cluster", part: "control plane",
		list: func(ctx context.Context) ([]cs.UpgradePolicy, error) {
			return u.cs.ListControlPlaneUpgradePolicies(ctx, href)
		},
		post: func(ctx context.Context, v string) (cs.UpgradePolicy, error) {
			return u.cs.PostControlPlaneUpgradePolicy(ctx, href, v)
		}}
}

func (u upgrades) nodePool(href string) upgradeOf {
	return upgradeOf{noun: "node pool", part: "node pool",
		list: func(ctx context.Context) ([]cs.UpgradePolicy, error) {
			return u.cs.ListNodePoolUpgradePolicies(ctx, href)
		},
		post: func(ctx context.Context, v string) (cs.UpgradePolicy, error) {
			return u.cs.PostNodePoolUpgradePolicy(ctx, href, v)
		}}
}

// versionAsked is what an upgrade resolves: the version.id asked for, the
// channel group, the version CS runs, and the version the target may not
// pass ("" for none; a node pool's control plane).
type versionAsked struct {
	want, group, running, ceiling string
}

// resolveTarget picks the z-stream want resolves to: among the versions
// CS offers as upgrades of the running one, enabled, in the channel
// group and no newer than the ceiling, those want names (a minor names
// its z-streams, a z-stream itself), the newest. Upstream picks by
// recency among the management side's upgrade edges; hcpops reads CS's
// available_upgrades, and newest means the highest version number. A
// want none matches is refused, naming the versions possible; a list
// that does not name the running version is no word either way.
func resolveTarget(noun string, a versionAsked, versions []cs.Version) (cs.Version, error) {
	offered := func(raw string) *cs.Version {
		for i := range versions {
			if v := &versions[i]; v.RawID == raw && v.ChannelGroup == a.group {
				return v
			}
		}
		return nil
	}
	cur := offered(a.running)
	if cur == nil {
		// CS runs the object at a version its own list does not name: a
		// list from a replica reading the wrong place (empty, or another
		// catalog's) is no word on which upgrades CS offers.
		return cs.Version{}, retryLater("Clusters Service's %q versions do not name %s, the version it runs the %s at: no word on its upgrades",
			a.group, a.running, noun)
	}
	var possible []string
	var best *cs.Version
	{
		for _, raw := range cur.AvailableUpgrades {
			v := offered(raw)
			if v == nil || !v.Enabled || !atMost(raw, a.ceiling) {
				continue
			}
			possible = append(possible, raw)
			if versionRuns(a.want, raw) && (best == nil || above(raw, best.RawID)) {
				best = v
			}
		}
	}
	if best != nil {
		return *best, nil
	}
	slices.SortFunc(possible, func(x, y string) int {
		if n, err := cs.CompareVersions(x, y); err == nil {
			return n
		}
		return strings.Compare(x, y)
	})
	list := "none"
	if len(possible) > 0 {
		list = strings.Join(possible, ", ")
	}
	why := fmt.Sprintf("Clusters Service offers no upgrade to it from %s in channel group %q", a.running, a.group)
	if a.ceiling != "" {
		why += fmt.Sprintf(" at or below the control plane's %s", a.ceiling)
	}
	return cs.Version{}, invalid(noun, versionField, fmt.Sprintf("%q", a.want), why+"; the versions possible are "+list)
}

// above says whether raw is a newer version than than; a value that is
// not a version is never above.
func above(raw, than string) bool {
	n, err := cs.CompareVersions(raw, than)
	return err == nil && n > 0
}

// atMost says whether raw may be chosen under ceiling ("" for none): a
// value that is not a version never may, so it is not offered.
func atMost(raw, ceiling string) bool {
	if ceiling == "" {
		return true
	}
	n, err := cs.CompareVersions(raw, ceiling)
	return err == nil && n <= 0
}

// start asks CS for the upgrade a asks for, unless CS runs it already or
// its newest policy is for it and not over: the idempotent half of a
// dispatch, read before anything is written. An upgrade to another
// version under way is waited out.
func (u upgrades) start(ctx context.Context, o upgradeOf, a versionAsked) error {
	if versionRuns(a.want, a.running) {
		return nil
	}
	policies, err := o.list(ctx)
	if err != nil {
		return fmt.Errorf("reading the %s's upgrade policies: %w", o.noun, err)
	}
	if p, ok := cs.Newest(policies); ok && !p.Ended() {
		if versionRuns(a.want, p.Version) {
			return nil // asked for already: a repeated dispatch
		}
		return retryLater("the %s's upgrade to %s is %s", o.part, p.Version, p.State)
	}
	versions, err := u.cs.ListVersions(ctx, "channel_group = '"+strings.ReplaceAll(a.group, "'", "''")+"'")
	if err != nil {
		return fmt.Errorf("reading Clusters Service's versions: %w", err)
	}
	target, err := resolveTarget(o.noun, a, versions)
	if err != nil {
		return err
	}
	if _, err := o.post(ctx, target.RawID); err != nil {
		return fmt.Errorf("asking Clusters Service to upgrade the %s to %s: %w", o.part, target.RawID, err)
	}
	return nil
}

// state is the poll's source for the version: Succeeded once CS runs
// want; Updating while CS's newest policy for it is under way, or while
// CS lists no policy for it (an update an earlier hcpops sent without
// one, or a policy CS no longer lists: no word that it failed); Failed
// when CS failed or cancelled it, with CS's description. The upgrade
// deadline is the update's (updating.deadline), enforced as every other:
// not while CS's policy for it is under way (overdue.go).
//
// The policy list is read only while CS does not run want yet, and then
// on every other poll (policyReads): the version, read every poll, is
// what makes the upgrade Succeeded; between reads the last answer stands.
func (u upgrades) state(ctx context.Context, op store.DocRef, o upgradeOf, source, want, running string) (*state.OperationState, error) {
	if versionRuns(want, running) {
		u.reads.forget(op)
		return state.NewOperationState(arm.ProvisioningStateSucceeded, "").WithSource(source), nil
	}
	if last, ok := u.reads.last(op); ok {
		return last, nil
	}
	s, err := u.policyState(ctx, o, source, want, running)
	if err != nil {
		return nil, err
	}
	if s.ProvisioningState.IsTerminal() {
		u.reads.forget(op)
	} else {
		u.reads.read(op, s)
	}
	return s, nil
}

// policyState is state's answer from CS's policy list.
func (u upgrades) policyState(ctx context.Context, o upgradeOf, source, want, running string) (*state.OperationState, error) {
	policies, err := o.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the %s's upgrade policies: %w", o.noun, err)
	}
	p, ok := cs.Newest(policies)
	if !ok || !versionRuns(want, p.Version) {
		return state.NewOperationState(arm.ProvisioningStateUpdating, fmt.Sprintf(
			"%s asks for %s, but Clusters Service runs the %s at %s and lists no upgrade policy for it",
			versionField, want, o.part, running)).WithSource(source), nil
	}
	words := p.State
	if p.Description != "" {
		words += ": " + p.Description
	}
	if p.State == cs.UpgradePolicyStateFailed || p.State == cs.UpgradePolicyStateCancelled {
		return state.NewOperationState(arm.ProvisioningStateFailed,
			fmt.Sprintf("Clusters Service's upgrade of the %s to %s is %s", o.part, p.Version, words)).WithSource(source), nil
	}
	// Not ended, and for the version asked: CS's word that it is under way.
	return state.NewOperationState(arm.ProvisioningStateUpdating,
		fmt.Sprintf("Clusters Service's upgrade of the %s from %s to %s is %s", o.part, running, p.Version, words)).WithSource(source).
		Working(policyUnderWay(p.State)), nil
}

// channelGroup is the group a resource's version names, stable when none.
func channelGroup(g string) string {
	if g == "" {
		return "stable"
	}
	return g
}

// settled records version as res's active version once every source of
// a create or update poll is Succeeded, so the document is current when
// the operation completes; a failed write keeps the poll from deciding.
func (u upgrades) settled(ctx context.Context, res *document.Resource, version string, states ...*state.OperationState) error {
	for _, s := range states {
		if s.ProvisioningState != arm.ProvisioningStateSucceeded {
			return nil
		}
	}
	if err := recordActiveVersion(ctx, u.store, res, version); err != nil {
		return fmt.Errorf("recording the active version of %s: %w", res.ResourceID(), err)
	}
	return nil
}
