package simulator

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// phase is one timed step of an object's life.
type phase struct {
	state string
	d     time.Duration
}

// timeline is a schedule of states. States are computed from the clock at
// read time instead of by background goroutines, so a fake clock drives the
// whole simulator deterministically.
type timeline struct {
	start  time.Time
	phases []phase
	final  string // state once every phase is over; "" means the object is gone
}

// at reports the state at now and when that state began.
func (t timeline) at(now time.Time) (state string, since time.Time) {
	since = t.start
	for _, p := range t.phases {
		end := since.Add(p.d)
		if now.Before(end) {
			return p.state, since
		}
		since = end
	}
	return t.final, since
}

// failBefore keeps the phases before the first one in stop and then settles
// in final, so a failure appears where the real service would report it.
func (t timeline) failBefore(final string, stop ...string) timeline {
	out := timeline{start: t.start, final: final}
	for _, p := range t.phases {
		if contains(stop, p.state) {
			break
		}
		out.phases = append(out.phases, p)
	}
	return out
}

// end is when the last phase is over.
func (t timeline) end() time.Time {
	e := t.start
	for _, p := range t.phases {
		e = e.Add(p.d)
	}
	return e
}

// settled is a timeline that is in final from now on.
func settled(now time.Time, final string) timeline {
	return timeline{start: now, final: final}
}

// transition is a timeline that spends d in state from now and then
// settles in final ("" when the object is gone afterwards).
func transition(now time.Time, state string, d time.Duration, final string) timeline {
	return timeline{start: now, phases: []phase{{state, d}}, final: final}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Durations are the per-phase durations of every simulated state machine.
// They are read when a transition starts, so a change affects later
// transitions only.
type Durations struct {
	ClusterValidating   time.Duration
	ClusterPending      time.Duration
	ClusterInstalling   time.Duration
	ClusterUpdating     time.Duration
	ClusterUninstalling time.Duration

	NodePoolValidating   time.Duration
	NodePoolPending      time.Duration
	NodePoolInstalling   time.Duration
	NodePoolUpdating     time.Duration
	NodePoolUninstalling time.Duration

	ExternalAuthUninstalling time.Duration

	ControlPlaneUpgradeScheduled time.Duration
	ControlPlaneUpgrading        time.Duration
	NodePoolUpgradeScheduled     time.Duration
	NodePoolUpgrading            time.Duration

	CredentialIssuing  time.Duration
	CredentialRevoking time.Duration
	CredentialExpiry   time.Duration // from creation
}

// DefaultDurations are short enough for an interactive local run.
func DefaultDurations() Durations {
	return Durations{
		ClusterValidating:        2 * time.Second,
		ClusterPending:           2 * time.Second,
		ClusterInstalling:        20 * time.Second,
		ClusterUpdating:          5 * time.Second,
		ClusterUninstalling:      10 * time.Second,
		NodePoolValidating:       time.Second,
		NodePoolPending:          time.Second,
		NodePoolInstalling:       10 * time.Second,
		NodePoolUpdating:         5 * time.Second,
		NodePoolUninstalling:     5 * time.Second,
		ExternalAuthUninstalling: 2 * time.Second,

		ControlPlaneUpgradeScheduled: time.Second,
		ControlPlaneUpgrading:        20 * time.Second,
		NodePoolUpgradeScheduled:     time.Second,
		NodePoolUpgrading:            10 * time.Second,
		CredentialIssuing:            2 * time.Second,
		CredentialRevoking:           2 * time.Second,
		CredentialExpiry:             24 * time.Hour,
	}
}

// EveryStateTakes is d in every state, with a day for a credential to
// expire: the timeline unit tests step a manual clock through.
func EveryStateTakes(d time.Duration) Durations {
	var out Durations
	for name, f := range out.fields() {
		if name != "credential_expiry" {
			*f = d
		}
	}
	out.CredentialExpiry = 24 * time.Hour
	return out
}

// fields names every duration for the admin API and the command line.
func (d *Durations) fields() map[string]*time.Duration {
	return map[string]*time.Duration{
		"cluster_validating":              &d.ClusterValidating,
		"cluster_pending":                 &d.ClusterPending,
		"cluster_installing":              &d.ClusterInstalling,
		"cluster_updating":                &d.ClusterUpdating,
		"cluster_uninstalling":            &d.ClusterUninstalling,
		"node_pool_validating":            &d.NodePoolValidating,
		"node_pool_pending":               &d.NodePoolPending,
		"node_pool_installing":            &d.NodePoolInstalling,
		"node_pool_updating":              &d.NodePoolUpdating,
		"node_pool_uninstalling":          &d.NodePoolUninstalling,
		"external_auth_uninstalling":      &d.ExternalAuthUninstalling,
		"control_plane_upgrade_scheduled": &d.ControlPlaneUpgradeScheduled,
		"control_plane_upgrading":         &d.ControlPlaneUpgrading,
		"node_pool_upgrade_scheduled":     &d.NodePoolUpgradeScheduled,
		"node_pool_upgrading":             &d.NodePoolUpgrading,
		"credential_issuing":              &d.CredentialIssuing,
		"credential_revoking":             &d.CredentialRevoking,
		"credential_expiry":               &d.CredentialExpiry,
	}
}

// Set changes one duration by its snake_case name.
func (d *Durations) Set(name string, v time.Duration) error {
	p, ok := d.fields()[name]
	if !ok {
		return fmt.Errorf("unknown duration %q (known: %s)", name, strings.Join(d.Names(), ", "))
	}
	if v < 0 {
		return fmt.Errorf("duration %s: %s is negative", name, v)
	}
	*p = v
	return nil
}

// Names lists the duration names, sorted.
func (d *Durations) Names() []string {
	var names []string
	for n := range d.fields() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Map renders the durations by name, as Go duration strings.
func (d Durations) Map() map[string]string {
	out := map[string]string{}
	for n, p := range d.fields() {
		out[n] = p.String()
	}
	return out
}

// ParseList applies "name=duration,name=duration" overrides.
func (d *Durations) ParseList(list string) error {
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("duration override %q: want name=duration", item)
		}
		v, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("duration override %q: %w", item, err)
		}
		if err := d.Set(strings.TrimSpace(name), v); err != nil {
			return err
		}
	}
	return nil
}
