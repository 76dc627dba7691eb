package simulator

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// populate gives s one of every object, a failed one, an armed failure
// and a ledger, through the API as a client would.
func populate(t *testing.T, s *testSim) {
	t.Helper()
	steps := []struct {
		method, path, body string
		status             int
	}{
		{"POST", clustersPath, fixture(t, "cluster.json"), 201},
		{"POST", "/_sim/advance", `{"by":"3m"}`, 200},
		{"POST", clusterPath(testID) + "/node_pools", fixture(t, "nodepool.json"), 201},
		{"POST", clusterPath(testID) + "/external_auth_config/external_auths", fixture(t, "externalauth.json"), 201},
		{"POST", credsPath(testID), "", 201},
		{"POST", "/_sim/clusters/" + testID + "/node_pools/np1/fail", `{"state":"recoverable_error","message":"disk full"}`, 200},
		{"POST", "/_sim/clusters/later/fail", `{"code":"OCM3055","message":"quota"}`, 200},
	}
	for i, st := range steps {
		if r := s.do(t, st.method, st.path, st.body); r.status != st.status {
			t.Fatalf("step %d %s %s: %d %s", i, st.method, st.path, r.status, r.body)
		}
	}
}

// views are what a client reads of every object, for comparing two
// simulators.
func views(t *testing.T, s *testSim) []string {
	t.Helper()
	var out []string
	for _, p := range []string{clustersPath, clusterPath(testID), clusterPath(testID) + "/status", clusterPath(testID) + "/inflight_checks",
		clusterPath(testID) + "/node_pools", clusterPath(testID) + "/node_pools/np1/status",
		clusterPath(testID) + "/external_auth_config/external_auths", credsPath(testID)} {
		r := s.do(t, "GET", p, "")
		out = append(out, p+" "+string(r.body))
	}
	return out
}

// A simulator restored from its snapshot answers every read as the one
// saved did, keeps its ledger and armed failures, draws fresh IDs, and
// its objects' timelines go on from where they were.
func TestSnapshotRoundTrip(t *testing.T) {
	a := startSim(t)
	populate(t, a)
	path := filepath.Join(t.TempDir(), SnapshotFile)
	if err := a.SaveSnapshot(path); err != nil {
		t.Fatal(err)
	}
	b := startSim(t)
	b.clock.Set(a.clock.Now())
	if ok, err := b.LoadSnapshot(path); err != nil || !ok {
		t.Fatalf("LoadSnapshot: %v %v", ok, err)
	}
	a.ResetLedger()
	b.ResetLedger()
	if va, vb := views(t, a), views(t, b); !slices.Equal(va, vb) {
		t.Fatalf("restored simulator differs:\n%s\n---\n%s", strings.Join(va, "\n"), strings.Join(vb, "\n"))
	}
	// Saved again, it is the same state.
	sa, err := a.snapshotState()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.snapshotState()
	if err != nil {
		t.Fatal(err)
	}
	if string(sa) != string(sb) {
		t.Errorf("snapshot of the restored simulator differs:\n%s\n%s", sa, sb)
	}
	if len(b.armed.clusters) != 1 {
		t.Errorf("armed failures after restore: %+v", b.armed)
	}
	// Another credential gets an id the first simulator never drew.
	r := b.do(t, "POST", credsPath(testID), "")
	if r.status != 201 || strings.Contains(string(sa), r.json(t)["id"].(string)) {
		t.Errorf("credential after restore: %d %s", r.status, r.body)
	}
	// The install goes on from the restored timeline.
	b.clock.Advance(10 * time.Minute)
	if st := b.do(t, "GET", clusterPath(testID), "").json(t)["status"].(map[string]any)["state"]; st != "ready" {
		t.Errorf("restored cluster after its install time: %v, want ready", st)
	}
}

// A damaged snapshot is an error naming the file, and leaves the
// simulator as it was; a missing one is no snapshot.
func TestDamagedSnapshot(t *testing.T) {
	dir := t.TempDir()
	s := startSim(t)
	populate(t, s)
	good := filepath.Join(dir, "good.json")
	if err := s.SaveSnapshot(good); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"truncated": string(data[:len(data)/2]),
		"empty":     "",
		"format":    strings.Replace(string(data), `"format":1`, `"format":9`, 1),
		"field":     strings.Replace(string(data), `"seq":`, `"seq":"x","was":`, 1),
		"object":    strings.Replace(string(data), `"kind":"Cluster"`, `"kind":7`, 1),
	} {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		fresh := startSim(t)
		before, _ := fresh.snapshotState()
		ok, err := fresh.LoadSnapshot(path)
		if err == nil || ok || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("%s: LoadSnapshot = %v, %v; want an error naming %s", name, ok, err, path)
		}
		if testing.Verbose() {
			t.Logf("%s: %v", name, err)
		}
		if after, _ := fresh.snapshotState(); string(after) != string(before) {
			t.Errorf("%s: a refused snapshot changed the simulator", name)
		}
	}
	if ok, err := s.LoadSnapshot(filepath.Join(dir, "none.json")); ok || err != nil {
		t.Errorf("missing snapshot: %v %v", ok, err)
	}
}

// Every Simulator field is either kept in the snapshot or named as this
// run's configuration: a field added later is a decision, not a loss.
func TestEverySimulatorFieldIsClassified(t *testing.T) {
	st := reflect.TypeFor[Simulator]()
	for i := range st.NumField() {
		name := st.Field(i).Name
		if !slices.Contains(persistedFields, name) && !slices.Contains(runtimeFields, name) {
			t.Errorf("Simulator.%s is neither in persistedFields nor in runtimeFields (persist.go)", name)
		}
	}
	// The object structs hold nothing the codec cannot keep.
	for _, v := range []any{&cluster{}, &nodePool{}, &externalAuth{}, &credential{}, &armedFailures{}, &ledger{}} {
		if err := checkKeepable(reflect.TypeOf(v).Elem(), reflect.TypeOf(v).Elem().Name(), map[reflect.Type]bool{}); err != nil {
			t.Error(err)
		}
	}
}

// checkKeepable walks a type as encodeValue walks a value.
func checkKeepable(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if _, ok := sdkCodecs[t]; ok || t == timeType || skipped(t) || seen[t] {
		return nil
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return nil
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkKeepable(t.Elem(), path+"[]", seen)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return &keepError{path, t}
		}
		return checkKeepable(t.Elem(), path+"[]", seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if err := checkKeepable(t.Field(i).Type, path+"."+t.Field(i).Name, seen); err != nil {
				return err
			}
		}
		return nil
	}
	return &keepError{path, t}
}

type keepError struct {
	path string
	t    reflect.Type
}

func (e *keepError) Error() string {
	return e.path + ": a " + e.t.String() + " cannot be kept in a snapshot (add its codec to sdkCodecs in codec.go)"
}

// Persist saves after each changing request, before its answer, and at
// the end; a restart from the file finds the objects.
func TestPersistSavesBeforeAnswering(t *testing.T) {
	s := startSim(t)
	path := filepath.Join(t.TempDir(), SnapshotFile)
	ctx, cancel := context.WithCancel(context.Background())
	done := s.Persist(ctx, path, time.Hour, func(err error) { t.Errorf("persist: %v", err) })
	if r := s.do(t, "POST", clustersPath, fixture(t, "cluster.json")); r.status != 201 {
		t.Fatalf("POST cluster: %d %s", r.status, r.body)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), testID) {
		t.Fatalf("snapshot after the POST was answered: %v %.200s", err, data)
	}
	if _, err := s.FailCluster(testID, ClusterFailure{Code: "OCM3055", Message: "after the POST"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	data, err = os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "after the POST") {
		t.Fatalf("snapshot after shutdown lacks the last change: %v", err)
	}
	if left, _ := filepath.Glob(path + ".*.tmp"); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// A failure armed for a name whose earlier cluster (a previous run's,
// restored) has failed already waits for the next cluster of that name.
func TestFailureSkipsObjectsThatFailedAlready(t *testing.T) {
	s := startSim(t)
	if _, err := s.FailCluster("dev-cluster", ClusterFailure{Code: "OCM3055", Message: "first"}); err != nil {
		t.Fatal(err)
	}
	if r := s.do(t, "POST", clustersPath, fixture(t, "cluster.json")); r.status != 201 {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	s.clock.Advance(3 * time.Minute)
	applied, err := s.FailCluster("dev-cluster", ClusterFailure{Code: "OCM3055", Message: "second"})
	if err != nil || applied {
		t.Fatalf("FailCluster over a failed cluster: applied %v, %v; want it armed", applied, err)
	}
	const other = "0000000000000000000000000000000a"
	if r := s.do(t, "POST", clustersPath, strings.Replace(fixture(t, "cluster.json"), testID, other, 1)); r.status != 201 {
		t.Fatalf("POST second: %d %s", r.status, r.body)
	}
	s.clock.Advance(3 * time.Minute)
	for id, want := range map[string]string{testID: "first", other: "second"} {
		st := s.do(t, "GET", clusterPath(id)+"/status", "").json(t)
		if st["state"] != "error" || !strings.Contains(st["provision_error_message"].(string), want) {
			t.Errorf("cluster %s: %v, want error %q", id, st, want)
		}
	}
}
