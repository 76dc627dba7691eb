package document

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
)

// parseResourceWhole is ParseResource as it was before the head: the whole
// document decoded and checked. The fuzz test below holds the head-based
// parse to it.
func parseResourceWhole(raw []byte) (*Resource, error) {
	doc, err := decodeTree("resource document", raw)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"id", "partitionKey", "resourceID", "resourceType", "_etag"} {
		if err := check(doc, []string{k}, tString); err != nil {
			return nil, err
		}
	}
	if err := check(doc, []string{"_ts"}, tInt); err != nil {
		return nil, err
	}
	r := &Resource{doc: doc}
	if r.Kind, err = ResourceKind(getString(doc, []string{"resourceType"})); err != nil {
		return nil, err
	}
	r.ETag = getString(doc, []string{"_etag"})
	r.Timestamp, _ = getInt(doc, []string{"_ts"})
	for _, k := range cosmosSystemFields {
		delete(doc, k)
	}
	if _, ok := lookup(doc, pProperties); !ok {
		return nil, fmt.Errorf("properties: missing")
	}
	for _, f := range schema(r.Kind) {
		if err := check(doc, f.path, f.typ); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// accessorValues reads every accessor.
func accessorValues(r *Resource) []any {
	out := []any{r.Kind, r.ETag, r.Timestamp, r.ID(), r.PartitionKey(), r.ResourceID(), r.ResourceType(),
		r.InstanceVersion(), r.Name(), r.Location(), r.Tags(), r.ProvisioningState(), r.ActiveOperationID(),
		r.ClusterServiceID(), r.PendingClusterServiceID(), r.RevokeCredentialsOperationID(), r.Version(),
		r.ManagedResourceGroup()}
	add := func(v ...any) { out = append(out, v...) }
	add(r.DeletionTimestamp())
	add(r.ClusterServiceDeletionTimestamp())
	add(r.CreateOperationCompletionDeadline())
	add(r.DeleteOperationCompletionDeadline())
	add(r.NodeDrainTimeoutMinutes())
	add(r.AuthorizedCIDRs())
	np, err := r.NodePool()
	add(np, fmt.Sprint(err))
	iss, err := r.Issuer()
	add(iss, fmt.Sprint(err))
	return out
}

var headSeeds = []string{
	`{"id":"i","partitionKey":"p","resourceID":"r","resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","_etag":"\"e\"","_ts":5,
	  "properties":{"serviceProviderProperties":{"provisioningState":"Failed","provisioningState":"Succeeded"},"properties":{"provisioningState":"Failed"}}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","properties":{"tags":{"a":"1"}},"properties":{"name":"second"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/nodePools","prop\u0065rties":{"properties":{"replicas":3,"labels":{"k":"v"}},
	  "serviceProviderProperties":{"pendingClusterServiceID":"p","revokeCredentialsOperationId":7}}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters/externalAuths","properties":{"properties":{"issuer":{"url":"u","audiences":["a",1]}}}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","properties":{"customerProperties":{"api":{"authorizedCidrs":[]}},"tags":"x"}}`,
	`{"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters","properties":[1,{"a":2}]}`,
	"{\"resourceType\":\"Microsoft.RedHatOpenShift/hcpOpenShiftClusters\",\"properties\":{\"name\":\"caf\xff\"}}",
	// Cut off where the head walks into an object.
	`{"properties":`, `{"properties": `, `{"properties":{"serviceProviderProperties":`,
}

// FuzzResourceHead: the head-based ParseResource accepts and refuses what
// the whole-document parse does, with the same error, and every accessor
// reads the same from the head as from the whole document, before and
// after an edit.
func FuzzResourceHead(f *testing.F) {
	for _, s := range headSeeds {
		f.Add([]byte(s))
	}
	for _, name := range fuzzSeedFiles {
		f.Add(readSeed(f, name))
	}
	for _, seed := range corpus(f, "FuzzParseResourceDocument") {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := ParseResource(raw)
		w, werr := parseResourceWhole(raw)
		if (err == nil) != (werr == nil) || (err != nil && !sameError(err, werr)) {
			t.Fatalf("ParseResource = %v; whole-document parse = %v", err, werr)
		}
		if err != nil {
			return
		}
		before := accessorValues(r)
		if want := accessorValues(w); !reflect.DeepEqual(before, want) {
			t.Fatalf("accessors differ\n head  %v\n whole %v", before, want)
		}
		if !reflect.DeepEqual(r.whole(), w.doc) {
			t.Fatalf("whole documents differ")
		}
		c := r.Clone()
		c.SetProvisioningState(arm.ProvisioningStateSucceeded)
		w.SetProvisioningState(arm.ProvisioningStateSucceeded)
		if got, want := accessorValues(c), accessorValues(w); !reflect.DeepEqual(got, want) {
			t.Fatalf("accessors differ after an edit\n head  %v\n whole %v", got, want)
		}
		if after := accessorValues(r); !reflect.DeepEqual(after, before) {
			t.Fatalf("editing the clone changed the original\n before %v\n after  %v", before, after)
		}
	})
}

func TestResourceHeadAgreesWithWholeDocument(t *testing.T) {
	for i, s := range headSeeds {
		r, err := ParseResource([]byte(s))
		w, werr := parseResourceWhole([]byte(s))
		if (err == nil) != (werr == nil) || (err != nil && !sameError(err, werr)) {
			t.Errorf("seed %d: ParseResource = %v; whole-document parse = %v", i, err, werr)
			continue
		}
		if err == nil && !reflect.DeepEqual(accessorValues(r), accessorValues(w)) {
			t.Errorf("seed %d: accessors differ\n head  %v\n whole %v", i, accessorValues(r), accessorValues(w))
		}
	}
}

// TestResourceHeadShape: a member the head decodes member by member must
// be one the schema checks to be an object, or the check would judge a
// partial value.
func TestResourceHeadShape(t *testing.T) {
	objects := map[string]bool{}
	for _, k := range []Kind{KindCluster, KindNodePool, KindExternalAuth} {
		for _, f := range schema(k) {
			if f.typ == tObject {
				objects[strings.Join(f.path, ".")] = true
			}
		}
	}
	var walk func(prefix []string, tr pathTrie)
	walk = func(prefix []string, tr pathTrie) {
		for k, n := range tr {
			p := slices.Concat(prefix, []string{k})
			if n.key != k {
				t.Errorf("%s is filed under %q", n.key, k)
			}
			if len(n.sub) > 0 && !objects[strings.Join(p, ".")] {
				t.Errorf("%s has members in the head but is not checked as an object", strings.Join(p, "."))
			}
			walk(p, n.sub)
		}
	}
	walk(nil, resourceHead)
}

// sameError compares parse errors. A string map with several bad members
// may name any one of them, so there only the map must agree.
func sameError(a, b error) bool {
	if a.Error() == b.Error() {
		return true
	}
	for _, m := range []string{"properties.tags.", "properties.properties.labels."} {
		if strings.HasPrefix(a.Error(), m) && strings.HasPrefix(b.Error(), m) {
			return true
		}
	}
	return false
}

// corpus reads the checked-in corpus of a fuzz test, to seed another.
func corpus(f *testing.F, fuzzTest string) [][]byte {
	f.Helper()
	dir := filepath.Join("testdata", "fuzz", fuzzTest)
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		_, lit, ok := strings.Cut(strings.TrimSpace(string(b)), "[]byte(")
		if !ok {
			f.Fatalf("%s: not a []byte corpus entry", e.Name())
		}
		s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			f.Fatalf("%s: %v", e.Name(), err)
		}
		out = append(out, []byte(s))
	}
	return out
}
