package devhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/core/store/cosmos"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
	"github.com/hcpops/hcpops/harness/devhost/functionapp"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
	"github.com/hcpops/hcpops/harness/storeapi"
)

// What a run says on the terminal besides its operations: what it
// started, where, and why it stopped.

func banner(w io.Writer, o options, fa *functionapp.App, st *devStore, shared storeapi.Advert, simURL, sinkURL string, host *triggerhost.Host) {
	fmt.Fprintf(w, "hcpopsctl dev (pid %d)\n", os.Getpid())
	if st.cosmos == nil {
		fmt.Fprint(w, layout("  store          "+filepath.Join(o.dataDir, localstore.StoreFileName), "", "(the CLI uses it through "+shared.URL+")"))
	} else {
		containers := "checked"
		if st.created {
			containers = "created if missing"
		}
		fmt.Fprintf(w, "  store          Cosmos DB %s database %s (containers %s and %s %s)\n", st.cosmos.Endpoint, st.cosmos.Database,
			cosmos.ResourcesContainer, cosmos.LeasesContainer, containers)
		fmt.Fprintf(w, "  access         %s\n", cosmosAccess(*st.cosmos))
		fmt.Fprintf(w, "                 hcpopsctl submit, status and doc use it through %s, or directly with the same settings\n", shared.URL)
		fmt.Fprintf(w, "  leases         %s container, %s<function> documents\n", cosmos.LeasesContainer, leasePrefix)
	}
	if o.logPath != "" {
		fmt.Fprint(w, layout("  logs           "+o.logPath, "", fmt.Sprintf("(appended, rotated at %d MB; -v copies them to stderr)", devlog.MaxMB)))
	}
	fmt.Fprintf(w, "  clusters svc   %s (simulator, phases %s/%s; admin API at /_sim/)\n", simURL, o.phase, 2*o.phase)
	fmt.Fprintf(w, "  notifications  %s (sink)\n", sinkURL)
	fmt.Fprintf(w, "  handler        %s (in process)\n", host.Supervisor().BaseURL())
	if u := host.FrontURL(); u != "" {
		fmt.Fprintf(w, "  http functions %s\n", u)
	}
	for _, fn := range fa.Functions {
		b := fn.Trigger()
		detail := b.Type
		switch b.Type {
		case functionapp.TypeTimerTrigger:
			detail += " " + b.Schedule
		case functionapp.TypeHTTPTrigger:
			detail += " " + shortRoute("/"+strings.Trim(fa.Host.RoutePrefix+"/"+b.Route, "/"))
		}
		fmt.Fprintf(w, "  function       %-20s %s\n", fn.Name, detail)
	}
}

// shortRoute keeps an HTTP function's route within the screen's width:
// its last segments, after "…" (functions/*/function.json has it whole).
func shortRoute(route string) string {
	const room = ScreenWidth - 50 // what the banner's columns leave
	parts := strings.Split(route, "/")
	for i := 1; len(route) > room && i < len(parts)-1; i++ {
		route = "…/" + strings.Join(parts[i+1:], "/")
	}
	return route
}

// stopped says why the run ended when an interrupt or -timeout ended it
// (an error ending it says so itself), and where its state stays.
func stopped(ctx context.Context, o options, stdout io.Writer) {
	if ctx.Err() == nil {
		return
	}
	why := "interrupted"
	if errors.Is(context.Cause(ctx), errTimeout) {
		why = fmt.Sprintf("-timeout %s passed", o.timeout)
	}
	fmt.Fprintf(stdout, "\nhcpopsctl dev stopped: %s. State stays in %s: a new run follows what is still active.\n", why, o.dataDir)
}

// cosmosAccess says how the run authenticates to Cosmos DB and whether it
// verifies the endpoint's certificate.
func cosmosAccess(c cosmos.Config) string {
	auth := "account key"
	switch {
	case c.Key != "":
	case c.Credential == cosmos.CredentialManagedIdentity || c.ClientID != "":
		auth = "managed identity (azidentity)"
	default:
		auth = "DefaultAzureCredential (azidentity)"
	}
	tls := "TLS verified against the system's roots"
	switch {
	case strings.HasPrefix(strings.ToLower(c.Endpoint), "http://"):
		tls = "plain http"
	case c.InsecureLoopbackTLS:
		tls = "TLS not verified (loopback)"
	case len(c.CAFiles) > 0:
		tls = "TLS verified against " + strings.Join(c.CAFiles, ", ")
	}
	return auth + ", " + tls
}
