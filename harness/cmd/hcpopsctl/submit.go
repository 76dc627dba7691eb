package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/document"
	devhost "github.com/hcpops/hcpops/harness/devhost"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/internal/cli"
)

// Requests submit takes, as ARM sends them to the frontend.
var submitRequests = []string{"create", "update", "delete", "request-credential", "revoke-credentials"}

// Default versions: a cluster names MAJOR.MINOR (CS manages the patch), a
// node pool its full version, each the lowest ARO-HCP's frontend accepts.
const (
	defaultClusterVersion  = "4.20"
	defaultNodePoolVersion = "4.20.8"
)

// submit writes an operation exactly as the ARO-HCP frontend would, so a
// real or local backend picks it up from the change feed. It refuses,
// before anything is written, what that frontend refuses.
func submit(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	const synopsis = "-resource RESOURCE_ID [-request create|update|delete|request-credential|revoke-credentials] [flags]"
	fs := cli.Command(prog+" submit", synopsis, "Writes an operation and its resource the way the ARO-HCP frontend does, into the running\n"+
		"hcpopsctl dev/serve's store (or Cosmos DB), and prints the status URL. The request is checked\n"+
		"as that frontend checks it (names, versions, replicas, URIs) before anything is written.")
	request := fs.String("request", "create", "create (a PUT: creates, or updates an existing resource), update (a PUT of an existing\nresource only), delete, request-credential, revoke-credentials (clusters only)")
	resourceID := fs.String("resource", "", "ARM resource ID of the cluster, node pool or external auth (required)")
	location := fs.String("location", "eastus", "ARM location (cluster create; used in the operation ID)")
	version := fs.String("version", "", "OpenShift version (default "+defaultClusterVersion+" for a cluster, "+defaultNodePoolVersion+" for a node pool)")
	channel := fs.String("channel-group", "stable", "version channel group: stable or fast")
	mrg := fs.String("managed-resource-group", "", "managed resource group (cluster); not the cluster's own")
	replicas := fs.Int("replicas", 2, "node pool replicas, 0 to 200")
	vmSize := fs.String("vm-size", "Standard_D8s_v3", "node pool VM size")
	issuer := fs.String("issuer-url", "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0", "external auth issuer URL (https)")
	audiences := fs.String("audiences", "hcpops", "external auth audiences, comma-separated (1 to 10)")
	notify := fs.String("notification-uri", "", "Azure-AsyncNotificationUri: where ARM is told of the outcome (absolute http(s) URL);\n"+
		"by default the running hcpopsctl dev's ARM sink (hcpopsctl sink steers it), none for none")
	tenant := fs.String("tenant", "", "X-Ms-Home-Tenant-Id of the caller (a UUID)")
	client := fs.String("client", "", "X-Ms-Client-Object-Id of the caller (a UUID)")
	create := fs.Bool("create", false, "create the embedded store when none exists and no hcpops process runs on the data dir")
	pos, err := cli.Parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected arguments %q; the resource goes in -resource", pos)
	}
	if *resourceID == "" {
		return errors.New("-resource is required ('hcpopsctl submit -h' for more)")
	}
	req := strings.ToLower(*request)
	if !slices.Contains(submitRequests, req) {
		return fmt.Errorf("-request %q: want %s", *request, strings.Join(submitRequests, ", "))
	}
	t, err := frontend.CheckResourceID(*resourceID)
	if err != nil {
		return refusal(err)
	}
	if (req == "request-credential" || req == "revoke-credentials") && t.Kind != document.KindCluster {
		return fmt.Errorf("-request %s: only a cluster takes it, and -resource names a %s", req, t.Kind)
	}
	uri := *notify
	if uri == noNotification {
		uri = ""
	}
	opts := frontend.Options{NotificationURI: uri, TenantID: *tenant, ClientID: *client}
	if err := frontend.CheckOptions(opts); err != nil {
		return refusal(err)
	}
	f := putFlags{location: *location, version: *version, channel: *channel, mrg: *mrg, replicas: *replicas,
		vmSize: *vmSize, issuer: *issuer, audiences: *audiences}
	var write func(context.Context, *frontend.Frontend) (frontend.Accepted, error)
	switch req {
	case "create", "update":
		if write, err = putRequest(t, f, &opts, req == "update"); err != nil {
			return refusal(err)
		}
	case "delete":
		write = func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
			return fe.Delete(ctx, t.ID, opts)
		}
	case "request-credential":
		write = func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
			return fe.RequestCredential(ctx, t.ID, opts)
		}
	case "revoke-credentials":
		write = func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
			return fe.RevokeCredentials(ctx, t.ID, opts)
		}
	}

	access := localstore.WriteExisting
	if *create {
		access = localstore.ReadWrite
	}
	s, conn, err := connect(ctx, getenv, access)
	if err != nil {
		return err
	}
	defer s.Close()
	sink := ""
	if *notify == "" && conn.Process != nil && conn.Process.NotificationURL != "" {
		opts.NotificationURI = conn.Process.NotificationURL + sinkPath(t, req)
		sink = " (" + conn.Process.Command + "'s ARM sink; -notification-uri none for none)"
	}
	fe := frontend.New(s, clock.Real{}, func() string { return uuid.Must(uuid.NewRandomFromReader(rand.Reader)).String() })
	a, err := write(ctx, fe)
	if err != nil {
		return err
	}
	op := a.Operation
	fmt.Fprintf(stdout, "operation %s\nrequest   %s %s\nstatus    %s\nstatusURL %s\n", op.Name(), op.Properties.Request, op.Properties.ExternalID, op.Properties.Status, a.StatusPath())
	if opts.NotificationURI != "" {
		fmt.Fprintf(stdout, "notify    %s%s\n", opts.NotificationURI, sink)
	}
	switch {
	case conn.Process != nil && conn.Process.FunctionsURL != "":
		// Only a live process's front door: a dead one's would not answer.
		fmt.Fprintf(stdout, "curl      %s\n", devhost.Curl(conn.Process.FunctionsURL, a.StatusPath(), op.Properties.TenantID, op.Properties.ClientID))
	case conn.File != "":
		fmt.Fprintf(stdout, "waiting   no hcpopsctl dev or serve runs on %s: the operation waits in %s until one starts there\n", localstore.DataDir(getenv), conn.File)
	}
	return nil
}

// noNotification is the -notification-uri that asks for none, even
// beside a dev whose sink submit would use.
const noNotification = "none"

// sinkPath is where in the dev's sink an operation is notified: the
// resource's names and the request, so the sink's record reads as what
// was asked.
func sinkPath(t frontend.Target, req string) string {
	p := "/notify/" + url.PathEscape(t.ResourceGroup) + "/" + url.PathEscape(t.Cluster)
	if t.Kind != document.KindCluster {
		p += "/" + url.PathEscape(t.Name)
	}
	return p + "/" + req
}

type putFlags struct {
	location, version, channel, mrg string
	replicas                        int
	vmSize, issuer, audiences       string
}

// putRequest checks a create or update as the frontend does and returns
// the write that makes it.
func putRequest(t frontend.Target, f putFlags, opts *frontend.Options, update bool) (func(context.Context, *frontend.Frontend) (frontend.Accepted, error), error) {
	switch t.Kind {
	case document.KindCluster:
		spec := frontend.ClusterSpec{Location: f.location, VersionID: orDefault(f.version, defaultClusterVersion), ChannelGroup: f.channel, ManagedResourceGroup: f.mrg}
		opts.Location = f.location
		if err := frontend.CheckCluster(spec, t.ResourceGroup); err != nil {
			return nil, err
		}
		if update {
			return func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
				return fe.UpdateCluster(ctx, t.ID, spec, *opts)
			}, nil
		}
		return func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
			return fe.PutCluster(ctx, t.ID, spec, *opts)
		}, nil
	case document.KindNodePool:
		spec := frontend.NodePoolSpec{VersionID: orDefault(f.version, defaultNodePoolVersion), ChannelGroup: f.channel, VMSize: f.vmSize, Replicas: f.replicas, AutoRepair: true}
		if err := frontend.CheckNodePool(spec); err != nil {
			return nil, err
		}
		if update {
			return func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
				return fe.UpdateNodePool(ctx, t.ID, spec, *opts)
			}, nil
		}
		return func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
			return fe.PutNodePool(ctx, t.ID, spec, *opts)
		}, nil
	default:
		spec := frontend.ExternalAuthSpec{IssuerURL: f.issuer, Audiences: strings.Split(f.audiences, ",")}
		if err := frontend.CheckExternalAuth(spec); err != nil {
			return nil, err
		}
		if update {
			return func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
				return fe.UpdateExternalAuth(ctx, t.ID, spec, *opts)
			}, nil
		}
		return func(ctx context.Context, fe *frontend.Frontend) (frontend.Accepted, error) {
			return fe.PutExternalAuth(ctx, t.ID, spec, *opts)
		}, nil
	}
}

// submitFlags maps the frontend's field paths to the flags that set them.
var submitFlags = map[string]string{
	"id":                              "-resource",
	"location":                        "-location",
	"properties.version.id":           "-version",
	"properties.version.channelGroup": "-channel-group",
	"properties.platform.managedResourceGroup": "-managed-resource-group",
	"properties.platform.vmSize":               "-vm-size",
	"properties.replicas":                      "-replicas",
	"properties.issuer.url":                    "-issuer-url",
	"properties.issuer.audiences":              "-audiences",
	"Azure-AsyncNotificationUri":               "-notification-uri",
	"X-Ms-Home-Tenant-Id":                      "-tenant",
	"X-Ms-Client-Object-Id":                    "-client",
}

// refusal restates the frontend's field errors in the flags a person
// typed, each once, and says nothing was written.
func refusal(err error) error {
	var ie *frontend.InvalidError
	if !errors.As(err, &ie) {
		return err
	}
	parts := make([]string, 0, len(ie.Fields))
	for _, f := range ie.Fields {
		name, _, _ := strings.Cut(f.Field, "[")
		flagName, ok := submitFlags[name]
		if !ok {
			flagName = f.Field
		}
		parts = append(parts, fmt.Sprintf("%s %q: %s (%s)", flagName, f.Value, f.Reason, f.Field))
	}
	return fmt.Errorf("refused as ARO-HCP's frontend refuses it, nothing written: %s", strings.Join(parts, "; "))
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
