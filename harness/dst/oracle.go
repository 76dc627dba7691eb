package dst

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/simulator"
)

// oracle knows what Clusters Service truly holds (the simulator, read
// behind every fault) and what each operation asked, and judges every
// terminal write when it lands, and the run as a whole at its end.
type oracle struct {
	sim *simulator.Simulator
	tr  *trace
	mem store.Store // read behind every gate and fault

	mu        sync.Mutex
	truth     map[string]simulator.Object
	history   map[string][]sample // by href, a sample a change
	resources map[string]*resource
	ops       map[string]*operation // by operation document id
	refusals  []refusal
	problems  []problem
	// residual are false deletes no witness could have prevented: no
	// live object of the kind was left to read (docs/arm.md).
	residual []problem
	// window is the confirmation window a delete with no witness must
	// have waited out for its false end to be the residual risk.
	window        time.Duration
	residualHrefs map[string]bool
}

type sample struct {
	at time.Time
	o  simulator.Object
	ok bool // false: CS had no such object then
}

// resource is what the store's writes said of one resource.
type resource struct {
	id           string
	kind         document.Kind
	csID         string
	pending      string
	activeOp     string
	deleting     bool
	gone         bool
	everPendings []string
	everCSIDs    []string
}

// operation is what its request asked and what became of it.
type operation struct {
	id, name string
	request  document.Request
	kind     document.Kind
	target   string
	start    time.Time
	status   arm.ProvisioningState
	ended    time.Time
	// asked is what an update asked of CS's object, for the check of its
	// Succeeded; nil for no check (a create, a delete).
	asked  func(simulator.Object) bool
	askedS string
	notify string // its notification URI's label
	pk     string
	stuck  bool // the engine reported it stuck
}

// refusal is CS's own 4xx to a request (not 404, 409, 408 or 429).
type refusal struct {
	at   time.Time
	path string
}

// problem is a rule the run broke, with the ids a reader needs.
type problem struct {
	at   time.Time
	what string
	ids  []string
}

func newOracle(sim *simulator.Simulator, tr *trace) *oracle {
	return &oracle{sim: sim, tr: tr, truth: map[string]simulator.Object{}, history: map[string][]sample{},
		resources: map[string]*resource{}, ops: map[string]*operation{}}
}

// sample reads CS's truth and records what changed: before every request
// reaches CS and at every terminal write, which is every instant at
// which CS can change or a decision can be taken on what it said.
func (o *oracle) sample() {
	now := time.Now()
	t := o.sim.Truth()
	o.mu.Lock()
	defer o.mu.Unlock()
	for href, obj := range t {
		h := o.history[href]
		if len(h) == 0 || !h[len(h)-1].ok || !sameObject(h[len(h)-1].o, obj) {
			o.history[href] = append(h, sample{at: now, o: obj, ok: true})
		}
	}
	for href, h := range o.history {
		if _, ok := t[href]; !ok && h[len(h)-1].ok {
			o.history[href] = append(h, sample{at: now})
		}
	}
	o.truth = t
}

// now is the last truth sampled.
func (o *oracle) now() map[string]simulator.Object {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.truth
}

func sortedHrefs(t map[string]simulator.Object) []string {
	return slices.Sorted(maps.Keys(t))
}

func sameObject(a, b simulator.Object) bool {
	return a.State == b.State && a.Version == b.Version && a.Replicas == b.Replicas && maps.Equal(a.Labels, b.Labels) &&
		a.NodeDrainGracePeriodMinutes == b.NodeDrainGracePeriodMinutes && slices.Equal(a.AuthorizedCIDRs, b.AuthorizedCIDRs) &&
		a.IssuerURL == b.IssuerURL && slices.Equal(a.Audiences, b.Audiences) && a.UpgradeState == b.UpgradeState &&
		a.UpgradeVersion == b.UpgradeVersion && a.Failed == b.Failed
}

// csAnswered notes CS's own answer to a request that reached it.
func (o *oracle) csAnswered(method, path string, status int) {
	if status < 400 || status >= 500 || status == 404 || status == 409 || status == 408 || status == 429 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refusals = append(o.refusals, refusal{at: time.Now(), path: path})
}

func (o *oracle) fail(what string, ids ...string) {
	o.problems = append(o.problems, problem{at: time.Now(), what: what, ids: ids})
	o.tr.note("VIOLATION %s", what)
}

// wrote sees one document a write stored.
func (o *oracle) wrote(ctx context.Context, pk string, body []byte) {
	kind, err := document.Sniff(body)
	if err != nil {
		return
	}
	if kind == document.KindOperation {
		op, err := document.ParseOperation(body)
		if err == nil {
			o.operationWritten(ctx, op)
		}
		return
	}
	if kind != document.KindCluster && kind != document.KindNodePool && kind != document.KindExternalAuth {
		return
	}
	r, err := document.ParseResource(body)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := o.resource(r.ResourceID(), kind)
	k.gone = false
	k.activeOp = r.ActiveOperationID()
	_, marked := r.DeletionTimestamp()
	_, sent := r.ClusterServiceDeletionTimestamp()
	k.deleting = marked || sent || r.ProvisioningState() == arm.ProvisioningStateDeleting
	if id := r.ClusterServiceID(); id != "" && id != k.csID {
		k.csID = id
		k.everCSIDs = append(k.everCSIDs, id)
	}
	if p := r.PendingClusterServiceID(); p != "" && p != k.pending {
		k.pending = p
		k.everPendings = append(k.everPendings, p)
	}
}

func (o *oracle) resource(id string, kind document.Kind) *resource {
	key := strings.ToLower(id)
	k := o.resources[key]
	if k == nil {
		k = &resource{id: id, kind: kind}
		o.resources[key] = k
	}
	return k
}

// softDeleted sees a document the store soft-deleted.
func (o *oracle) softDeleted(pk, id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.resources {
		if document.CosmosID(r.id) == id {
			r.gone = true
		}
	}
}

// operationWritten judges a write that ends an operation.
func (o *oracle) operationWritten(ctx context.Context, doc *document.OperationDocument) {
	o.mu.Lock()
	op := o.register(doc)
	if op.status.IsTerminal() && doc.Properties.Status != op.status {
		o.fail(fmt.Sprintf("%s %s of %s was %s, then written %s by %s", op.request, op.name, op.target, op.status,
			doc.Properties.Status, actorOf(ctx)), op.name)
	}
	if op.status.IsTerminal() || !doc.Properties.Status.IsTerminal() {
		op.status = doc.Properties.Status
		o.mu.Unlock()
		return
	}
	prev := op.status
	op.status, op.ended = doc.Properties.Status, time.Now()
	o.mu.Unlock()
	o.sample()
	o.mu.Lock()
	defer o.mu.Unlock()
	who := actorOf(ctx)
	msg := ""
	if doc.Properties.Error != nil {
		msg = doc.Properties.Error.Code + ": " + doc.Properties.Error.Message
	}
	o.tr.note("terminal %s %s %s %s by %s %s", op.request, op.kind, op.name, op.status, who, msg)
	switch {
	case who == actorFrontend || who == actorOperator:
		return // a person's or the frontend's own decision
	case op.status == arm.ProvisioningStateSucceeded:
		o.judgeSucceeded(op)
	case op.status == arm.ProvisioningStateFailed:
		o.judgeFailed(op, msg, prev)
	case op.status == arm.ProvisioningStateCanceled:
		o.judgeCanceled(op)
	}
}

// hrefs are the CS objects that are, or may be, the operation's target's.
func (o *oracle) hrefs(op *operation) []string {
	r := o.resources[strings.ToLower(op.target)]
	var out []string
	if r != nil {
		out = append(append(out, r.everCSIDs...), r.everPendings...)
	}
	if op.kind != document.KindCluster {
		if parent := o.resources[strings.ToLower(parentOf(op.target))]; parent != nil {
			seg := cs.NodePoolsSegment
			if op.kind == document.KindExternalAuth {
				seg = cs.ExternalAuthsSegment
			}
			name := strings.ToLower(op.target[strings.LastIndex(op.target, "/")+1:])
			for _, c := range append(append([]string(nil), parent.everCSIDs...), parent.everPendings...) {
				out = append(out, c+seg+name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func parentOf(rid string) string {
	i := strings.Index(strings.ToLower(rid), "/hcpopenshiftclusters/")
	if i < 0 {
		return ""
	}
	rest := rid[i+len("/hcpOpenShiftClusters/"):]
	if j := strings.Index(rest, "/"); j >= 0 {
		return rid[:i+len("/hcpOpenShiftClusters/")+j]
	}
	return rid
}

func (o *oracle) judgeSucceeded(op *operation) {
	switch op.request {
	case document.RequestDelete:
		// With no witness of the kind anywhere, a 404 that outlasts the
		// confirmation window is all the evidence there is: docs/arm.md
		// states this residual risk, and the run reports it apart.
		judge := o.fail
		if !o.witnessFor(op) && op.ended.Sub(op.start) >= o.window {
			judge = o.residualRisk
		}
		// An object an earlier false delete of the same resource name left
		// behind is that delete's residual orphan, not this one's (seed
		// 94333: the name re-created, then deleted right).
		for _, h := range o.hrefs(op) {
			if obj, ok := o.truth[h]; ok && !o.residualHrefs[h] {
				judge(fmt.Sprintf("delete %s of %s Succeeded while CS holds %s in state %s", op.name, op.target, h, obj.State), op.name, h, op.target)
			}
		}
		if op.kind == document.KindCluster {
			for _, h := range sortedHrefs(o.truth) {
				if obj := o.truth[h]; obj.Kind == simulator.KindCluster && sameARM(obj.Azure, op.target) && !o.residualHrefs[h] {
					judge(fmt.Sprintf("delete %s of %s Succeeded while CS holds its cluster %s (%s)", op.name, op.target, h, obj.State), op.name, h)
				}
			}
		}
	case document.RequestCreate:
		r := o.resources[strings.ToLower(op.target)]
		if r == nil || r.csID == "" {
			o.fail(fmt.Sprintf("create %s of %s Succeeded with no CS object recorded", op.name, op.target), op.name, op.target)
			return
		}
		if !o.was(r.csID, op.start, func(x simulator.Object) bool { return x.State == "ready" && o.belongs(x, op) }) {
			o.fail(fmt.Sprintf("create %s of %s Succeeded but CS never showed %s ready and its since the create began (now %s)",
				op.name, op.target, r.csID, o.describe(r.csID)), op.name, r.csID, op.target)
		}
	case document.RequestUpdate:
		r := o.resources[strings.ToLower(op.target)]
		if r == nil || r.csID == "" || op.asked == nil {
			return
		}
		if !o.was(r.csID, op.start, op.asked) {
			o.fail(fmt.Sprintf("update %s of %s Succeeded but CS never showed %s (%s) since it began; now %s",
				op.name, op.target, op.askedS, r.csID, o.describe(r.csID)), op.name, r.csID, op.target)
		}
	}
}

// was reports whether CS's object at href met ok at some instant from
// since on.
func (o *oracle) was(href string, since time.Time, ok func(simulator.Object) bool) bool {
	h := o.history[href]
	for i, s := range h {
		last := i == len(h)-1 || !h[i+1].at.Before(since)
		if s.ok && last && ok(s.o) {
			return true
		}
	}
	return false
}

func (o *oracle) describe(href string) string {
	if obj, ok := o.truth[href]; ok {
		return fmt.Sprintf("%s %s version %s", obj.Kind, obj.State, obj.Version)
	}
	return "no such object"
}

// belongs reports whether CS's object is the operation's target's.
func (o *oracle) belongs(x simulator.Object, op *operation) bool {
	if x.Kind == simulator.KindCluster {
		return sameARM(x.Azure, op.target)
	}
	return strings.EqualFold(x.Name, op.target[strings.LastIndex(op.target, "/")+1:])
}

func sameARM(a cs.AzureRef, rid string) bool {
	want := strings.ToLower("/subscriptions/" + a.SubscriptionID + "/resourceGroups/" + a.ResourceGroupName +
		"/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + a.ResourceName)
	return strings.ToLower(rid) == want
}

// inProgress: CS says it is working on the object.
func inProgress(x simulator.Object) bool {
	switch x.State {
	case "installing", "uninstalling", "updating", "pending", "validating", "validating_update", "pending_update", "waiting":
		return true
	}
	return x.Upgrading
}

func (o *oracle) judgeFailed(op *operation, msg string, prev arm.ProvisioningState) {
	hrefs := o.hrefs(op)
	if strings.Contains(msg, "did not complete before the deadline") {
		if prev == arm.ProvisioningStateAccepted && op.request == document.RequestUpdate {
			return // never dispatched: CS was never given this change, whatever else it is doing (seed 60775)
		}
		for _, h := range hrefs {
			if x, ok := o.truth[h]; ok && inProgress(x) && o.belongs(x, op) && op.request != document.RequestDelete {
				o.fail(fmt.Sprintf("%s %s of %s Failed at its deadline while CS says %s is %s", op.request, op.name, op.target, h, x.State),
					op.name, h)
			}
		}
		return
	}
	for _, h := range hrefs {
		if o.was(h, op.start, func(x simulator.Object) bool {
			return x.Failed != "" || x.State == "error" || x.State == "recoverable_error"
		}) {
			return
		}
	}
	if strings.Contains(msg, "was never created") && !o.holds(op) {
		return // the update of a resource CS has no object of
	}
	if v := askedVersion(msg); v != "" && strings.Contains(msg, "offers no upgrade") && o.unreachable(hrefs, v) {
		return // the engine's refusal of a version CS's own list does not offer
	}
	for _, rf := range o.refusals {
		if rf.at.Before(op.start) {
			continue
		}
		for _, h := range hrefs {
			if strings.HasPrefix(rf.path, h) || strings.HasPrefix(h, rf.path) || sameCluster(rf.path, h) {
				return
			}
		}
	}
	o.fail(fmt.Sprintf("%s %s of %s Failed (%s) without CS's word: no error state, failed upgrade or refusal of %v",
		op.request, op.name, op.target, msg, hrefs), append([]string{op.name, op.target}, hrefs...)...)
}

func (o *oracle) judgeCanceled(op *operation) {
	r := o.resources[strings.ToLower(op.target)]
	if r != nil && (r.activeOp != op.name && r.activeOp != "" || r.deleting || r.gone) {
		return
	}
	if p := o.resources[strings.ToLower(parentOf(op.target))]; p != nil && (p.deleting || p.gone) {
		return
	}
	o.fail(fmt.Sprintf("%s %s of %s Canceled by the engine while it was the resource's active operation and nothing deleted it",
		op.request, op.name, op.target), op.name, op.target)
}

// ask records what the frontend accepted: the operation, what an update
// asks of CS's object, and the label of its notification URI.
func (o *oracle) ask(doc *document.OperationDocument, asked func(simulator.Object) bool, askedS, label string, notify bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	op := o.register(doc)
	op.asked, op.askedS = asked, askedS
	if notify {
		op.notify = label
	}
}

// register is the operation of doc, known from its first write on.
// Callers hold mu.
func (o *oracle) register(doc *document.OperationDocument) *operation {
	op := o.ops[doc.ID]
	if op == nil {
		op = &operation{id: doc.ID, name: doc.Name(), request: doc.Properties.Request, target: doc.Properties.ExternalID,
			start: doc.Properties.StartTime, status: doc.Properties.Status, kind: targetKind(doc.Properties.ExternalID),
			pk: doc.PartitionKey}
		o.ops[doc.ID] = op
	}
	return op
}

// reportedStuck notes the engine's operation.stuck record for an
// operation (by name).
func (o *oracle) reportedStuck(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, op := range o.ops {
		if op.name == name {
			op.stuck = true
		}
	}
}

// someActive is an operation not yet terminal, drawn with rng; nil when
// there is none.
func (o *oracle) someActive(rng interface{ IntN(int) int }) *operation {
	o.mu.Lock()
	defer o.mu.Unlock()
	var active []*operation
	for _, id := range slices.Sorted(maps.Keys(o.ops)) {
		if op := o.ops[id]; !op.status.IsTerminal() {
			active = append(active, op)
		}
	}
	if len(active) == 0 {
		return nil
	}
	return active[rng.IntN(len(active))]
}

// final judges the run as a whole once it is over: every operation ended
// or was reported stuck, ARM was told each ending once, no document the
// frontend wrote is lost, and CS holds no object whose resource is gone.
func (o *oracle) final(w *world) {
	o.sample()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(o.ops)) {
		op := o.ops[id]
		w.cover.terminal(string(op.request), op.kind.String(), string(op.status))
		if !op.status.IsTerminal() && !op.stuck {
			o.fail(fmt.Sprintf("%s %s of %s still %s after the faults healed, and never reported stuck",
				op.request, op.name, op.target, op.status), op.name, op.target)
		}
		if _, err := w.mem.Get(context.Background(), op.pk, op.id); err != nil {
			o.fail(fmt.Sprintf("operation %s of %s is lost: %v", op.name, op.target, err), op.name)
		}
		if op.notify == "" {
			continue
		}
		got := w.sink.deliveries(op.notify)
		if again := w.sink.redelivered(op.notify); again > 0 && len(got)-again == 1 {
			// ARM was told again only while the store still held the
			// notification owed: the first delivery's clearing had not
			// landed (a restart, a store fault). At least once is the
			// contract; the run counts these apart.
			w.cover.add("notification delivered again before its clearing was stored", again)
			got = got[:1]
		}
		switch {
		case op.status.IsTerminal() && len(got) != 1:
			o.fail(fmt.Sprintf("%s %s of %s ended %s; ARM was told %d times (%v)", op.request, op.name, op.target, op.status, len(got), got), op.name)
		case !op.status.IsTerminal() && len(got) > 0:
			o.fail(fmt.Sprintf("%s %s of %s is %s; ARM was told %v", op.request, op.name, op.target, op.status, got), op.name)
		case len(got) == 1 && got[0] != op.status:
			o.fail(fmt.Sprintf("%s %s of %s ended %s; ARM was told %s", op.request, op.name, op.target, op.status, got[0]), op.name)
		}
	}
	for _, href := range sortedHrefs(o.truth) {
		x := o.truth[href]
		if x.State == "uninstalling" || o.owned(x) {
			continue
		}
		what := fmt.Sprintf("CS holds %s %s (%s) with no live resource: an orphan", x.Kind, href, x.State)
		if o.residualHrefs[href] || o.residualHrefs[x.Cluster] {
			o.residualRisk(what+", left by a false delete no witness could catch", href)
			continue
		}
		o.fail(what, href)
	}
}

// owned reports whether a live resource is CS's object's. Callers hold mu.
func (o *oracle) owned(x simulator.Object) bool {
	for _, r := range o.resources {
		if r.gone {
			continue
		}
		if slices.Contains(r.everCSIDs, x.Href) || slices.Contains(r.everPendings, x.Href) {
			return true
		}
		if x.Kind != simulator.KindCluster && r.kind != document.KindCluster && strings.EqualFold(x.Name, r.id[strings.LastIndex(r.id, "/")+1:]) {
			if p := o.resources[strings.ToLower(parentOf(r.id))]; p != nil && (slices.Contains(p.everCSIDs, x.Cluster) || slices.Contains(p.everPendings, x.Cluster)) {
				return true
			}
		}
	}
	return false
}

// unreachable reports whether CS's objects run versions from which CS
// offers no upgrade to version (a raw id, or a minor: "4.21").
func (o *oracle) unreachable(hrefs []string, version string) bool {
	for _, h := range hrefs {
		x, ok := o.truth[h]
		if !ok {
			continue
		}
		if c, ok := o.truth[x.Cluster]; ok && x.Kind == simulator.KindNodePool && aboveVersion(version, c.Version) {
			return true // a node pool never runs ahead of its control plane
		}
		for _, v := range simulator.DefaultVersions() {
			if v.RawID != x.Version {
				continue
			}
			for _, up := range v.AvailableUpgrades {
				if up == version || strings.HasPrefix(up, version+".") {
					return false
				}
			}
			return true
		}
	}
	return false
}

// askedVersion is the version an engine's refusal of an upgrade quotes.
func askedVersion(msg string) string {
	_, rest, ok := strings.Cut(msg, `version.id is "`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// quiet reports whether every operation has ended and ARM has been told
// of each ending it was to hear of.
func (o *oracle) quiet(s *sink) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, op := range o.ops {
		if !op.status.IsTerminal() || op.notify != "" && len(s.deliveries(op.notify)) == 0 {
			return false
		}
	}
	return true
}

// holds reports whether CS holds an object of the operation's target now.
// Callers hold mu.
func (o *oracle) holds(op *operation) bool {
	for _, h := range o.hrefs(op) {
		if x, ok := o.truth[h]; ok && o.belongs(x, op) {
			return true
		}
	}
	if op.kind == document.KindCluster {
		for _, x := range o.truth {
			if x.Kind == simulator.KindCluster && sameARM(x.Azure, op.target) {
				return true
			}
		}
	}
	return false
}

// residualRisk records a false delete no witness could have caught; the
// objects it names are then the residual risk's too, orphans included.
func (o *oracle) residualRisk(what string, ids ...string) {
	o.residual = append(o.residual, problem{at: time.Now(), what: what, ids: ids})
	o.tr.note("RESIDUAL (no witness of its kind) %s", what)
	if o.residualHrefs == nil {
		o.residualHrefs = map[string]bool{}
	}
	for _, id := range ids {
		o.residualHrefs[id] = true
	}
}

// witnessFor reports whether the store held, besides op's target, a live
// object of its kind (its CS id recorded, not being deleted) that CS has:
// a witness the engine could have read. Callers hold mu.
func (o *oracle) witnessFor(op *operation) bool {
	for _, r := range o.resources {
		if r.kind != op.kind || r.gone || r.deleting || r.csID == "" || strings.EqualFold(r.id, op.target) {
			continue
		}
		if x, ok := o.truth[r.csID]; ok && x.State != "uninstalling" {
			return true
		}
	}
	return false
}

// aboveVersion reports whether version (a raw id, or a minor) is newer
// than running.
func aboveVersion(version, running string) bool {
	n, err := cs.CompareVersions(version, running)
	return err == nil && n > 0
}

// owed reports whether the store still holds the notification of the
// operation whose URI label is label (its notificationUri not yet
// cleared).
func (o *oracle) owed(label string) bool {
	o.mu.Lock()
	var op *operation
	for _, x := range o.ops {
		if x.notify == label {
			op = x
		}
	}
	o.mu.Unlock()
	if op == nil {
		return false
	}
	item, err := o.mem.Get(context.Background(), op.pk, op.id)
	if err != nil {
		return false
	}
	doc, err := document.ParseOperation(item.Body)
	return err == nil && doc.Properties.NotificationURI != ""
}

// sameCluster reports whether a refused path is about the cluster of
// href under CS's other prefix: a credential request's POST goes to
// /api/clusters_mgmt/v1/clusters/{id}/break_glass_credentials.
func sameCluster(path, href string) bool {
	_, cluster := cs.ParseHref(href)
	id := cluster[strings.LastIndex(cluster, "/")+1:]
	return id != "" && strings.HasPrefix(path, cs.ClustersMgmtPrefix+"/clusters/"+id+"/")
}
