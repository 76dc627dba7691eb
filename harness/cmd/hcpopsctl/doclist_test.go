package main

import (
	"strings"
	"testing"
)

// doc list -subscription lists every live document of the partition, as
// its help says: doc get finds a document with no resourceID, and one
// whose resourceID names another subscription, so doc list shows them too.
func TestDocListListsEveryDocumentOfThePartition(t *testing.T) {
	env := envFor(t.TempDir())
	const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	docs := `{"id":"bare","partitionKey":"` + sub + `"}` + "\n" +
		`{"id":"stray","partitionKey":"` + sub + `","resourceID":"/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg"}`
	if out, err := runCmd(t, env, docs, "doc", "put", "-create", "-"); err != nil {
		t.Fatalf("doc put: %v %s", err, out)
	}
	if _, err := runCmd(t, env, "", "submit", "-resource", testCluster); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"bare", "stray"} {
		if out, err := runCmd(t, env, "", "doc", "get", id, "-subscription", sub); err != nil {
			t.Fatalf("doc get %s: %v %s", id, err, out)
		}
	}
	out, err := runCmd(t, env, "", "doc", "list", "-subscription", sub)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, want := range []string{`"id":"bare"`, `"id":"stray"`, `"resourceType":"Microsoft.RedHatOpenShift/hcpOpenShiftClusters"`} {
		if !strings.Contains(out, want) {
			t.Errorf("doc list -subscription does not list the document with %s:\n%s", want, out)
		}
	}
	if len(lines) != 4 { // bare, stray, the cluster and its operation
		t.Errorf("doc list printed %d documents, want 4:\n%s", len(lines), out)
	}
}
