package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/devhost/devlog"
	"github.com/hcpops/hcpops/internal/cli"
	"github.com/hcpops/hcpops/internal/dev/frontend"
)

// opRow is one line of `hcpops ops`, and its -o json form.
type opRow struct {
	OperationID        string              `json:"operationId"`
	Subscription       string              `json:"subscriptionId"`
	Request            string              `json:"request"`
	ResourceID         string              `json:"resourceId"`
	Status             string              `json:"status"`
	StartTime          time.Time           `json:"startTime"`
	LastTransitionTime time.Time           `json:"lastTransitionTime"`
	AgeSeconds         float64             `json:"ageSeconds"`
	Error              *arm.CloudErrorBody `json:"error,omitempty"`
	// LastProblem is the last warning or error the local process logged
	// about a non-terminal operation: why it is retrying.
	LastProblem *problemLine `json:"lastProblem,omitempty"`
	// Notifying: terminal, and ARM is still to be told.
	Notifying  bool   `json:"notifying,omitempty"`
	StatusPath string `json:"statusPath"`
}

type problemLine struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	Error   string    `json:"error,omitempty"`
}

// ops lists operations as a table: what is in flight, what failed and why.
func ops(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && (args[0] == "fail" || args[0] == "cancel") {
		return opsAbandon(ctx, args[0], args[1:], getenv, stdout)
	}
	const synopsis = "[-subscription SUB] [-active] [-o table|json]"
	fs := cli.Command("ops", synopsis, "Lists operations, newest first: id, request, resource, status, age and last error. Without\n"+
		"-subscription: the active operations of every subscription (and finished ones still to\n"+
		"notify ARM). With -subscription: every operation of it kept in the store (7 days), or with\n"+
		"-active only the active ones. For the local store, an active operation's last error is the\n"+
		"last warning the running process logged about it (why it is retrying).\n"+
		"'hcpops ops fail|cancel OPERATION -reason TEXT' ends an operation by hand ('hcpops ops fail -h').")
	sub := fs.String("subscription", "", "list this subscription's operations")
	active := fs.Bool("active", false, "only operations not yet terminal (or still notifying ARM)")
	output := fs.String("o", "table", "output: table or json")
	pos, err := cli.Parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected arguments %q", pos)
	}
	if *output != "table" && *output != "json" {
		return fmt.Errorf("-o %q: want table or json", *output)
	}
	if *sub != "" {
		if err := checkSubscription("-subscription", *sub); err != nil {
			return err
		}
	}
	s, conn, err := connect(ctx, getenv, app.ReadOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	now := time.Now()
	var rows []opRow
	collect := func(items []store.Item) error {
		for _, it := range items {
			if kind, err := document.Sniff(it.Body); err != nil || kind != document.KindOperation {
				continue
			}
			op, err := document.ParseOperation(it.Body)
			if err != nil {
				continue // the dispatcher logs it; doc get shows it
			}
			p := op.Properties
			notifying := p.Status.IsTerminal() && p.NotificationURI != ""
			if (*active || *sub == "") && p.Status.IsTerminal() && !notifying {
				continue
			}
			rows = append(rows, opRow{
				OperationID: op.Name(), Subscription: op.PartitionKey, Request: string(p.Request), ResourceID: p.ExternalID,
				Status: string(p.Status), StartTime: p.StartTime, LastTransitionTime: p.LastTransitionTime,
				AgeSeconds: now.Sub(p.StartTime).Seconds(), Error: p.Error, Notifying: notifying, StatusPath: p.OperationID,
			})
		}
		return nil
	}
	if *sub == "" {
		err = s.ActiveOperations(ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, collect)
	} else {
		err = s.Children(ctx, document.PartitionKey(*sub), "/subscriptions/"+*sub, collect)
	}
	if err != nil {
		return fmt.Errorf("listing operations: %w", err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].StartTime.After(rows[j].StartTime) })
	if conn.Process != nil || conn.File != "" {
		lastProblems(app.DataDir(getenv), rows)
	}
	if *output == "json" {
		if rows == nil {
			rows = []opRow{}
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, string(b))
		return err
	}
	if len(rows) == 0 {
		what := "no active operations"
		if *sub != "" && !*active {
			what = "no operations in subscription " + *sub
		} else if *sub != "" {
			what = "no active operations in subscription " + *sub
		}
		_, err := fmt.Fprintln(stdout, what)
		return err
	}
	return opsTable(stdout, rows, *sub == "")
}

// lastProblems fills each active row's LastProblem from the local log.
func lastProblems(dir string, rows []opRow) {
	byID := map[string]*opRow{}
	for i := range rows {
		if !arm.ProvisioningState(rows[i].Status).IsTerminal() || rows[i].Notifying {
			byID[rows[i].OperationID] = &rows[i]
		}
	}
	if len(byID) == 0 {
		return
	}
	// No log (Cosmos, or a serve that logs elsewhere) leaves it empty. A
	// dispatch or transition after a problem means it was overcome.
	_ = devlog.Scan(dir, func(r devlog.Record) {
		row := byID[r.OperationID]
		switch {
		case row == nil:
		case r.Msg == lifecycle.MsgDispatched || r.Msg == lifecycle.MsgTransition:
			row.LastProblem = nil
		case r.Problem():
			row.LastProblem = &problemLine{Time: r.Time, Message: r.Msg, Error: r.Str("error")}
		}
	}, `"operation_id"`)
}

func opsTable(w io.Writer, rows []opRow, withSubscription bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "OPERATION\tREQUEST\tRESOURCE\tSTATUS\tAGE\tLAST ERROR"
	if withSubscription {
		head = "OPERATION\tSUBSCRIPTION\tREQUEST\tRESOURCE\tSTATUS\tAGE\tLAST ERROR"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		cols := []string{r.OperationID}
		if withSubscription {
			cols = append(cols, r.Subscription)
		}
		status := r.Status
		if r.Notifying {
			status += " (notifying)"
		}
		cols = append(cols, r.Request, resourceName(r.ResourceID), status, age(time.Duration(r.AgeSeconds*float64(time.Second))), lastError(r))
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	return tw.Flush()
}

// lastError is the operation's own error, else why it is retrying.
func lastError(r opRow) string {
	switch {
	case r.Error != nil:
		return clip(r.Error.Code+": "+r.Error.Message, 200)
	case r.LastProblem != nil:
		s := r.LastProblem.Message
		if r.LastProblem.Error != "" {
			s += ": " + r.LastProblem.Error
		}
		return clip("(retrying) "+s, 200)
	}
	return "-"
}

// resourceName names a resource below its subscription: "cluster
// rg/demo", "node pool rg/demo/np1".
func resourceName(id string) string {
	t, err := frontend.CheckResourceID(id)
	if err != nil {
		return id
	}
	name := t.ResourceGroup + "/" + t.Cluster
	if t.Kind != document.KindCluster {
		name += "/" + t.Name
	}
	return t.Kind.String() + " " + name
}

// age is a duration the way kubectl shows one: 45s, 12m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
