package clusterservice

import "time"

// Upgrade policy states as CS spells them (ocm-api-model's
// UpgradePolicyStateValue).
const (
	UpgradePolicyStatePending   = "pending"
	UpgradePolicyStateScheduled = "scheduled"
	UpgradePolicyStateStarted   = "started"
	UpgradePolicyStateDelayed   = "delayed"
	UpgradePolicyStateCompleted = "completed"
	UpgradePolicyStateFailed    = "failed"
	UpgradePolicyStateCancelled = "cancelled"
)

// UpgradePolicy is a control plane upgrade policy of a cluster or an
// upgrade policy of a node pool: CS's request to move the object to
// Version, with the state of that move.
type UpgradePolicy struct {
	ID      string
	Href    string
	Version string // raw id ("4.21.20")
	State   string
	// Description is CS's own word on the state (why it failed).
	Description string
	Created     time.Time
}

// Ended reports whether CS has finished with the policy, either way.
func (p UpgradePolicy) Ended() bool {
	switch p.State {
	case UpgradePolicyStateCompleted, UpgradePolicyStateFailed, UpgradePolicyStateCancelled:
		return true
	}
	return false
}

// Newest is the most recently created policy; ok is false when there is
// none.
func Newest(policies []UpgradePolicy) (UpgradePolicy, bool) {
	var out UpgradePolicy
	for i, p := range policies {
		if i == 0 || p.Created.After(out.Created) {
			out = p
		}
	}
	return out, len(policies) > 0
}
