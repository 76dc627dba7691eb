package frontend

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

func TestCheckResourceID(t *testing.T) {
	rg := "/subscriptions/" + sub + "/resourceGroups/myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/"
	cases := []struct {
		id       string
		kind     document.Kind
		name     string
		wantErr  string // "" for a valid ID
		wantName string
	}{
		{id: clusterID, kind: document.KindCluster, name: "myCluster"},
		{id: npID, kind: document.KindNodePool, name: "np1"},
		{id: eaID, kind: document.KindExternalAuth, name: "default"},
		{id: strings.ToLower(clusterID), kind: document.KindCluster, name: "mycluster"},
		{id: rg + "c1/nodePools", wantErr: "the node pool name is missing after /nodePools"},
		{id: rg + "c1/nodePools/", wantErr: `node pool name is empty`},
		{id: rg + "bad name!", wantErr: `cluster name "bad name!"`},
		{id: rg + "1starts-with-digit", wantErr: `cluster name "1starts-with-digit"`},
		{id: rg + "ends-with-dash-", wantErr: `cluster name "ends-with-dash-"`},
		{id: rg + strings.Repeat("a", 54), kind: document.KindCluster, name: strings.Repeat("a", 54)},
		{id: rg + strings.Repeat("a", 55), wantErr: "at most 54"},
		{id: rg + "c1/nodePools/" + strings.Repeat("n", 15), kind: document.KindNodePool, name: strings.Repeat("n", 15)},
		{id: rg + "c1/nodePools/" + strings.Repeat("n", 16), wantErr: "at most 15"},
		{id: rg + "c1/externalAuths/e_1", wantErr: `external auth name "e_1"`},
		{id: rg + "c1/machinePools/m1", wantErr: `"machinePools" is not a child type`},
		{id: rg + "c1/nodePools/np1/extra", wantErr: "want /subscriptions/SUB"},
		{id: "/subscriptions/abc/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1", wantErr: `subscription "abc" is not a UUID`},
		{id: "/subscriptions/" + sub + "/resourceGroups/rg./providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1", wantErr: `resource group "rg."`},
		{id: "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.Compute/hcpOpenShiftClusters/c1", wantErr: `"Microsoft.Compute", want "Microsoft.RedHatOpenShift"`},
		{id: "not-an-id", wantErr: "want /subscriptions/SUB"},
	}
	for _, c := range cases {
		got, err := CheckResourceID(c.id)
		if c.wantErr == "" {
			if err != nil || got.Kind != c.kind || got.Name != c.name || !strings.EqualFold(got.SubscriptionID, sub) {
				t.Errorf("CheckResourceID(%q) = %+v, %v; want %s %q", c.id, got, err, c.kind, c.name)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), `id "`) || !IsInvalid(err) {
			t.Errorf("CheckResourceID(%q) = %v, want an InvalidError naming id and containing %q", c.id, err, c.wantErr)
		}
	}
}

func TestCheckSpecs(t *testing.T) {
	drain, badDrain := 30, -1
	good := ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}
	np := NodePoolSpec{VersionID: "4.20.8", ChannelGroup: "stable", VMSize: "Standard_D8s_v3", Replicas: 2}
	ea := ExternalAuthSpec{IssuerURL: "https://login.example/v2.0", Audiences: []string{"a"}}
	with := func(f func(*ClusterSpec)) ClusterSpec { s := good; f(&s); return s }
	withNP := func(f func(*NodePoolSpec)) NodePoolSpec { s := np; f(&s); return s }
	withEA := func(f func(*ExternalAuthSpec)) ExternalAuthSpec { s := ea; f(&s); return s }
	cases := []struct {
		name string
		err  error
		want string // "" for no error
	}{
		{"cluster ok", CheckCluster(with(func(s *ClusterSpec) { s.NodeDrainTimeoutMinutes = &drain; s.ManagedResourceGroup = "mrg" }), "rg"), ""},
		{"cluster version missing", CheckCluster(with(func(s *ClusterSpec) { s.VersionID = "" }), "rg"), `properties.version.id "": is required`},
		{"cluster version old", CheckCluster(with(func(s *ClusterSpec) { s.VersionID = "4.19" }), "rg"), `"4.19": must be at least 4.20`},
		{"cluster version micro", CheckCluster(with(func(s *ClusterSpec) { s.VersionID = "4.20.3" }), "rg"), "MAJOR.MINOR"},
		{"cluster version v5", CheckCluster(with(func(s *ClusterSpec) { s.VersionID = "5.0" }), "rg"), "v5 and above"},
		{"cluster version garbage", CheckCluster(with(func(s *ClusterSpec) { s.VersionID = "latest" }), "rg"), `"latest": not a version`},
		{"cluster channel", CheckCluster(with(func(s *ClusterSpec) { s.ChannelGroup = "nightly" }), "rg"), `channelGroup "nightly": want one of stable, fast`},
		{"cluster location", CheckCluster(with(func(s *ClusterSpec) { s.Location = "East US" }), "rg"), `location "East US"`},
		{"cluster mrg same", CheckCluster(with(func(s *ClusterSpec) { s.ManagedResourceGroup = "RG" }), "rg"), `managedResourceGroup "RG": must not be the cluster's own`},
		{"cluster drain", CheckCluster(with(func(s *ClusterSpec) { s.NodeDrainTimeoutMinutes = &badDrain }), "rg"), `nodeDrainTimeoutMinutes "-1"`},
		{"node pool ok", CheckNodePool(np), ""},
		{"node pool replicas -3", CheckNodePool(withNP(func(s *NodePoolSpec) { s.Replicas = -3 })), `properties.replicas "-3": must be between 0 and 200`},
		{"node pool replicas 201", CheckNodePool(withNP(func(s *NodePoolSpec) { s.Replicas = 201 })), `properties.replicas "201"`},
		{"node pool replicas 0", CheckNodePool(withNP(func(s *NodePoolSpec) { s.Replicas = 0 })), ""},
		{"node pool version short", CheckNodePool(withNP(func(s *NodePoolSpec) { s.VersionID = "4.20" })), "MAJOR.MINOR.PATCH"},
		{"node pool version old", CheckNodePool(withNP(func(s *NodePoolSpec) { s.VersionID = "4.20.3" })), "at least 4.20.8"},
		{"node pool prerelease", CheckNodePool(withNP(func(s *NodePoolSpec) { s.VersionID = "4.21.0-rc.1" })), ""},
		{"node pool vm size", CheckNodePool(withNP(func(s *NodePoolSpec) { s.VMSize = "" })), "vmSize"},
		{"external auth ok", CheckExternalAuth(ea), ""},
		{"external auth http", CheckExternalAuth(withEA(func(s *ExternalAuthSpec) { s.IssuerURL = "http://login.example" })), "must be https URL"},
		{"external auth not a url", CheckExternalAuth(withEA(func(s *ExternalAuthSpec) { s.IssuerURL = "not-a-url" })), `url "not-a-url": must be https URL`},
		{"external auth audiences", CheckExternalAuth(withEA(func(s *ExternalAuthSpec) { s.Audiences = nil })), "at least 1 item"},
		{"external auth empty audience", CheckExternalAuth(withEA(func(s *ExternalAuthSpec) { s.Audiences = []string{"a", " "} })), "audiences[1]"},
		{"external auth ca", CheckExternalAuth(withEA(func(s *ExternalAuthSpec) { s.CA = "nope" })), "not PEM"},
		{"options ok", CheckOptions(Options{NotificationURI: "https://arm.example/n", TenantID: sub}), ""},
		{"options bad uri", CheckOptions(Options{NotificationURI: "not-a-url"}), `Azure-AsyncNotificationUri "not-a-url": want an absolute http(s) URL`},
		{"options ftp uri", CheckOptions(Options{NotificationURI: "ftp://x/y"}), `want an absolute http(s) URL`},
		{"options tenant", CheckOptions(Options{TenantID: "me"}), `X-Ms-Home-Tenant-Id "me": not a UUID`},
		{"several at once", CheckNodePool(withNP(func(s *NodePoolSpec) { s.Replicas = -3; s.ChannelGroup = "x" })), `channelGroup "x": want one of stable, fast; properties.replicas "-3"`},
	}
	for _, c := range cases {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("%s: %v, want no error", c.name, c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want) || !IsInvalid(c.err)):
			t.Errorf("%s: %v, want an InvalidError containing %q", c.name, c.err, c.want)
		}
	}
}

// An update of a missing resource is refused before anything is written,
// as ARM's PATCH answers 404.
func TestUpdateOfMissingWritesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	count := func() int {
		n := 0
		if err := f.store.Children(ctx, document.PartitionKey(sub), "/subscriptions/"+sub, func(items []store.Item) error { n += len(items); return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := f.fe.UpdateCluster(ctx, clusterID, ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, opts); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("update of a missing cluster: %v, want ErrNotFound", err)
	}
	if _, err := f.fe.Delete(ctx, clusterID, opts); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a missing cluster: %v, want ErrNotFound", err)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d documents written by refused requests", n)
	}
	if _, err := f.fe.PutCluster(ctx, clusterID, ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "stable"}, opts); err != nil {
		t.Fatal(err)
	}
	f.settle(clusterID, "Succeeded", "")
	if _, err := f.fe.UpdateNodePool(ctx, npID, NodePoolSpec{VersionID: "4.20.8", VMSize: "x"}, opts); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a missing node pool: %v", err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d documents after one create, want its operation and cluster", n)
	}
	a, err := f.fe.UpdateCluster(ctx, clusterID, ClusterSpec{Location: "eastus", VersionID: "4.20", ChannelGroup: "fast"}, opts)
	if err != nil || a.Operation.Properties.Request != document.RequestUpdate {
		t.Fatalf("update of an existing cluster: %+v %v", a, err)
	}
}
