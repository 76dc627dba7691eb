package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/frontend"
	"github.com/hcpops/hcpops/core/store/cosmos"
	devhost "github.com/hcpops/hcpops/devhost"
	"github.com/hcpops/hcpops/storeapi"
)

// submit writes an operation exactly as the ARO-HCP frontend would, so a
// real or local backend picks it up from the change feed.
func submit(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	const synopsis = "-resource RESOURCE_ID [-request create|update|delete|request-credential|revoke-credentials] [flags]"
	fs := command("submit", synopsis, "Writes an operation and its resource the way the ARO-HCP frontend does, into the running\nhcpops dev/serve's store (or Cosmos DB, or the embedded store), and prints the status URL.")
	request := fs.String("request", "create", "create (or update an existing resource), update, delete, request-credential, revoke-credentials")
	resourceID := fs.String("resource", "", "ARM resource ID of the cluster, node pool or external auth (required)")
	location := fs.String("location", "eastus", "ARM location (cluster create; used in the operation ID)")
	version := fs.String("version", "4.20", "OpenShift version (cluster / node pool)")
	channel := fs.String("channel-group", "stable", "version channel group")
	mrg := fs.String("managed-resource-group", "", "managed resource group (cluster)")
	replicas := fs.Int("replicas", 2, "node pool replicas")
	vmSize := fs.String("vm-size", "Standard_D8s_v3", "node pool VM size")
	issuer := fs.String("issuer-url", "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0", "external auth issuer URL")
	audiences := fs.String("audiences", "hcpops", "external auth audiences, comma-separated")
	notify := fs.String("notification-uri", "", "Azure-AsyncNotificationUri")
	tenant := fs.String("tenant", "", "X-Ms-Home-Tenant-Id of the caller")
	client := fs.String("client", "", "X-Ms-Client-Object-Id of the caller")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("submit: unexpected arguments %q; the resource goes in -resource", pos)
	}
	if *resourceID == "" {
		return fmt.Errorf("submit: -resource is required ('hcpops submit -h' for more)")
	}
	kind, _, err := document.ResourceKindOfID("-resource", *resourceID)
	if err != nil {
		return err
	}
	rid, err := document.ParseResourceID("-resource", *resourceID)
	if err != nil {
		return err
	}
	if err := checkSubscription("-resource's subscription", rid.SubscriptionID); err != nil {
		return err
	}
	s, _, err := app.ConnectStore(ctx, getenv, app.ReadWrite, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer s.Close()
	fe := frontend.New(s, time.Now, func() string { return uuid.Must(uuid.NewRandomFromReader(rand.Reader)).String() })
	opts := frontend.Options{NotificationURI: *notify, TenantID: *tenant, ClientID: *client}
	var a frontend.Accepted
	switch strings.ToLower(*request) {
	case "create", "update":
		a, err = put(ctx, fe, kind, *resourceID, opts, putFlags{*location, *version, *channel, *mrg, *replicas, *vmSize, *issuer, *audiences})
		if err == nil && strings.EqualFold(*request, "update") && a.Operation.Properties.Request != document.RequestUpdate {
			err = errors.New("submit: -request update on a resource that did not exist; it was created instead")
		}
	case "delete":
		a, err = fe.Delete(ctx, *resourceID, opts)
	case "request-credential":
		a, err = fe.RequestCredential(ctx, *resourceID, opts)
	case "revoke-credentials":
		a, err = fe.RevokeCredentials(ctx, *resourceID, opts)
	default:
		return fmt.Errorf("submit: -request %q: want create, update, delete, request-credential or revoke-credentials", *request)
	}
	if err != nil {
		return err
	}
	op := a.Operation
	fmt.Fprintf(stdout, "operation %s\nrequest   %s %s\nstatus    %s\nstatusURL %s\n", op.Name(), op.Properties.Request, op.Properties.ExternalID, op.Properties.Status, a.StatusPath())
	// A running hcpops dev advertises its front door: show ARM's poll.
	if adv, err := storeapi.ReadAdvert(app.DataDir(getenv)); err == nil && adv.FunctionsURL != "" && !cosmosConfigured(getenv) {
		fmt.Fprintf(stdout, "curl      %s\n", devhost.Curl(adv.FunctionsURL, a.StatusPath(), op.Properties.TenantID, op.Properties.ClientID))
	}
	return nil
}

func cosmosConfigured(getenv func(string) string) bool {
	_, err := cosmos.ConfigFromEnv(getenv)
	return err == nil
}

type putFlags struct {
	location, version, channel, mrg string
	replicas                        int
	vmSize, issuer, audiences       string
}

func put(ctx context.Context, fe *frontend.Frontend, kind document.Kind, id string, opts frontend.Options, f putFlags) (frontend.Accepted, error) {
	switch kind {
	case document.KindCluster:
		opts.Location = f.location
		return fe.PutCluster(ctx, id, frontend.ClusterSpec{Location: f.location, VersionID: f.version, ChannelGroup: f.channel, ManagedResourceGroup: f.mrg}, opts)
	case document.KindNodePool:
		return fe.PutNodePool(ctx, id, frontend.NodePoolSpec{VersionID: f.version, ChannelGroup: f.channel, VMSize: f.vmSize, Replicas: f.replicas, AutoRepair: true}, opts)
	default:
		return fe.PutExternalAuth(ctx, id, frontend.ExternalAuthSpec{IssuerURL: f.issuer, Audiences: strings.Split(f.audiences, ",")}, opts)
	}
}
