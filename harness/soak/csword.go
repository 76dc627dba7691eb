package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/harness/simulator"
)

// The soak's evidence invariants, for clusters, node pools and external
// auths, creates, updates and deletes alike: no terminal state without
// CS's own word about that object (what the witness saw the simulator
// itself answer, behind every proxy that lies or answers for it, before
// the soak first saw the operation terminal), and no CS object left at
// the end without a live resource that names it.

// objectStates reads the objects a 2xx answer to a GET of path is about,
// by lower-cased href, with the state it gives each: a single object (or
// its /status) or a list's items. Anything else names none.
func objectStates(path string, body []byte) map[string]string {
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	out := map[string]string{}
	note := func(href string, m map[string]any) {
		href = strings.ToLower(href)
		if kind, _ := cs.ParseHref(href); kind == cs.HrefOther {
			return
		}
		if st := stateOf(m); st != "" {
			out[href] = st
		}
	}
	items, isList := doc["items"].([]any)
	if !isList {
		note(strings.TrimSuffix(path, "/status"), doc)
		return out
	}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		href, _ := m["href"].(string)
		if id, _ := m["id"].(string); href == "" && id != "" {
			href = path + "/" + id
		}
		note(href, m)
	}
	return out
}

// stateOf is the state an OCM object or status carries: a cluster's
// "state", a node pool's state.node_pool_state_value, an external auth's
// state.value, or the same inside its "status".
func stateOf(m map[string]any) string {
	if st, ok := m["status"].(map[string]any); ok {
		if s := stateOf(st); s != "" {
			return s
		}
	}
	switch s := m["state"].(type) {
	case string:
		return s
	case map[string]any:
		for _, k := range []string{"node_pool_state_value", "value"} {
			if v, ok := s[k].(string); ok {
				return v
			}
		}
	}
	return ""
}

// falseTerminals holds every terminal operation on a cluster, node pool
// or external auth CS had to CS's own word about that object, seen before
// the operation was first seen terminal:
//   - a delete Succeeded: CS's own 404 for the object, or for its cluster
//     (a child goes with it);
//   - a create Succeeded: CS answered the object ready;
//   - an update Succeeded: CS answered the object, in a state other than
//     error, since the update started;
//   - a Failed that is not a deadline's: CS answered the object in error
//     (a create) or at all since it started (an update). A deadline needs
//     no word of CS's: it fails work CS did not say it was doing.
//
// Operations on objects CS never had (no href recorded) are not checked.
func (e evidence) falseTerminals() (checked int, problems []string) {
	for _, k := range sortedKeys(e.ops) {
		op := e.ops[k]
		p := op.Properties
		if p.Status != arm.ProvisioningStateSucceeded && p.Status != arm.ProvisioningStateFailed {
			continue
		}
		if p.Request != document.RequestCreate && p.Request != document.RequestUpdate && p.Request != document.RequestDelete {
			continue // a credential's: CS's word is about the credential
		}
		kind, _, err := document.ResourceKindOfID("externalId", p.ExternalID)
		if err != nil || kind != document.KindCluster && kind != document.KindNodePool && kind != document.KindExternalAuth {
			continue
		}
		href := strings.ToLower(lastCSID(e.versions[docKey{pk: k.pk, id: document.CosmosID(p.ExternalID)}]))
		seen := firstSeen(e.versions[k], string(p.Status))
		if href == "" || seen.IsZero() {
			continue // CS never had it, or the soak never saw it end
		}
		if p.Status == arm.ProvisioningStateFailed && p.Error != nil && strings.Contains(p.Error.Message, "did not complete before the deadline") {
			continue
		}
		checked++
		if pr := e.withoutWord(op, href, seen); pr != "" {
			problems = append(problems, pr)
		}
	}
	return checked, problems
}

// withoutWord says what CS's word the terminal operation op on href,
// seen terminal at seen, lacks; "" when it has it.
func (e evidence) withoutWord(op *document.OperationDocument, href string, seen time.Time) string {
	p := op.Properties
	what := fmt.Sprintf("%s %s of %s %s", strings.ToLower(string(p.Request)), op.Name(), p.ExternalID, p.Status)
	words := e.csWords[href]
	// said reports whether CS answered href in a state ok takes between
	// from and seen.
	said := func(from time.Time, ok func(string) bool) bool {
		return slices.ContainsFunc(words, func(w stateSeen) bool { return ok(w.state) && !w.at.After(seen) && !w.at.Before(from) })
	}
	is := func(s string) func(string) bool { return func(st string) bool { return st == s } }
	switch {
	case p.Request == document.RequestDelete && p.Status == arm.ProvisioningStateSucceeded:
		_, cluster := cs.ParseHref(href)
		at, ok := e.absent[href]
		if !ok && cluster != "" && cluster != href {
			at, ok = e.absent[cluster]
		}
		switch {
		case !ok:
			return fmt.Sprintf("%s, but CS never answered 404 for %s", what, href)
		case at.After(seen):
			return fmt.Sprintf("%s was seen Succeeded at %s, before CS first answered 404 for %s at %s", what, stamp(seen), href, stamp(at))
		}
	case p.Request == document.RequestCreate && p.Status == arm.ProvisioningStateSucceeded:
		if !said(time.Time{}, is(cs.ClusterStateReady)) {
			return fmt.Sprintf("%s at %s, but CS had not answered %s ready by then", what, stamp(seen), href)
		}
	case p.Request == document.RequestCreate:
		if !said(time.Time{}, is(cs.ClusterStateError)) {
			return fmt.Sprintf("%s at %s, but CS had not answered %s in error by then, nor was it a deadline", what, stamp(seen), href)
		}
	default: // an update, or a delete Failed
		failed := p.Status == arm.ProvisioningStateFailed
		if !said(p.StartTime, func(st string) bool { return failed || st != cs.ClusterStateError }) {
			return fmt.Sprintf("%s at %s, but CS answered nothing of %s since it started at %s", what, stamp(seen), href, stamp(p.StartTime))
		}
	}
	return ""
}

// orphans lists the objects CS has at the end that no live resource
// names: a create that landed after its resource was deleted, a delete
// completed while CS kept the object.
func (e evidence) orphans() []string {
	named := map[string]bool{}
	for _, f := range e.finals {
		if !f.found || f.doc.deleted {
			continue
		}
		for _, h := range []string{f.doc.csID, f.doc.pendingID, e.childHref(f.doc)} {
			if h != "" {
				named[strings.ToLower(h)] = true
			}
		}
	}
	var out []string
	for _, href := range slices.Sorted(maps.Keys(e.csObjects)) {
		if !named[href] {
			out = append(out, fmt.Sprintf("clusters service still has %s (%s) at the end, but no live resource names it", href, e.csObjects[href]))
		}
	}
	return out
}

// childHref is where CS has the node pool or external auth d is the
// resource of, when d names no CS href of its own (its POST's answer was
// lost): a child's CS ID is its name under its cluster's href.
func (e evidence) childHref(d docVersion) string {
	if d.csID != "" || d.resource == "" {
		return ""
	}
	kind, id, err := document.ResourceKindOfID("resourceID", d.resource)
	if err != nil || kind != document.KindNodePool && kind != document.KindExternalAuth || id.Parent == nil {
		return ""
	}
	parent := e.finals[docKey{pk: d.key.pk, id: document.CosmosID(id.Parent.String())}]
	if !parent.found || parent.doc.csID == "" {
		return ""
	}
	segment := cs.NodePoolsSegment
	if kind == document.KindExternalAuth {
		segment = cs.ExternalAuthsSegment
	}
	return parent.doc.csID + segment + strings.ToLower(id.Name)
}

// csObjectsOf lists every cluster, node pool and external auth the
// simulator has, with its state, by lower-cased href: read from it
// directly, its faults cleared first (the run is over).
func csObjectsOf(sim *simulator.Simulator) (map[string]string, error) {
	if err := sim.SetFaults(simulator.Faults{}); err != nil {
		return nil, fmt.Errorf("hcpops soak: clearing the simulator's faults: %w", err)
	}
	if err := sim.SetLatency(simulator.Latency{}); err != nil {
		return nil, fmt.Errorf("hcpops soak: clearing the simulator's latency: %w", err)
	}
	out := map[string]string{}
	clusters, err := listAll(sim, cs.ClustersPath, out)
	if err != nil {
		return nil, err
	}
	for _, c := range clusters {
		for _, sub := range []string{"/node_pools", "/external_auth_config/external_auths"} {
			if _, err := listAll(sim, c+sub, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// listAll pages through one simulator list into out and returns the
// hrefs it listed.
func listAll(sim http.Handler, path string, out map[string]string) ([]string, error) {
	var hrefs []string
	for page := 1; page <= 1000; page++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s?page=%d&size=100", path, page), nil)
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		cancel()
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("hcpops soak: listing %s page %d at the end: status %d", path, page, rec.Code)
		}
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("hcpops soak: listing %s page %d at the end: %w", path, page, err)
		}
		if len(l.Items) == 0 {
			return hrefs, nil
		}
		for href, st := range objectStates(path, rec.Body.Bytes()) {
			out[href] = st
			if !strings.Contains(href, "/node_pools/") && !strings.Contains(href, "/external_auths/") {
				hrefs = append(hrefs, href)
			}
		}
	}
	return nil, fmt.Errorf("hcpops soak: listing %s at the end: more than 1000 pages", path)
}
