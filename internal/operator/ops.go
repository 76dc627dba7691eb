package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/internal/cli"
)

// opRow is one line of `hcpopsctl ops`, and its -o json form.
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
	Notifying bool `json:"notifying,omitempty"`
	// StuckPastSeconds is the stuck threshold its age passed (as
	// operation.stuck records it, HCPOPS_STUCK_AFTER); 0: not stuck.
	StuckPastSeconds float64 `json:"stuckPastSeconds,omitempty"`
	// StuckSince is when its age passed that threshold.
	StuckSince *time.Time `json:"stuckSince,omitempty"`
	// Deadline is when the tick fails it, if it has one.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Notification is its last ARM notification when that failed or was
	// refused, from the local log.
	Notification *notificationLine `json:"notification,omitempty"`
	StatusPath   string            `json:"statusPath"`
	// Unreadable: the document does not parse as an operation, so the
	// tick skips it (and says so every tick) until it is mended or removed.
	Unreadable *unreadableDoc `json:"unreadable,omitempty"`

	op *document.OperationDocument
}

// unreadableDoc is an operation document the tick cannot parse.
type unreadableDoc struct {
	DocumentID string `json:"documentId"`
	Error      string `json:"error"`
	// Since is its last write (_ts): the tick has skipped it since.
	Since time.Time `json:"since"`
}

type problemLine struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	Error   string    `json:"error,omitempty"`
}

// ops lists operations as a table: what is in flight, what failed and why.
func ops(ctx context.Context, env Env, args []string) error {
	if len(args) > 0 && (args[0] == "fail" || args[0] == "cancel") {
		return opsAbandon(ctx, env, args[0], args[1:])
	}
	stdout := env.Stdout
	const synopsis = "[-subscription SUB] [-active] [-o table|json]"
	fs := cli.Command(env.Prog+" ops", synopsis, "Lists operations, newest first: id, request, resource, status, age and last error. Without\n"+
		"-subscription: the active operations of every subscription (and finished ones still to\n"+
		"notify ARM). With -subscription: every operation of it kept in the store (7 days), or with\n"+
		"-active only the active ones. STATUS marks an operation past a stuck threshold\n"+
		"(STUCK>20m: "+lifecycle.EnvStuckAfter+"); DEADLINE is when the tick fails it. Thresholds and\n"+
		"deadlines are the running dev or serve's own settings (a first line says when this shell's\n"+
		"differ); against Cosmos DB, those the Function App recorded when it started. For the local\n"+
		"store, an active operation's last error is the last warning the process logged about it\n"+
		"(why it is retrying), and a failed or refused ARM notification is shown (a refused one for\n"+
		"a day, as ARM never hears of it); with no dev or serve running, a first line says so. An\n"+
		"operation document the tick cannot parse is listed as UNREADABLE with its document id, why,\n"+
		"and since when (its last write): the tick skips it until it is mended or removed.\n"+
		"'"+env.Prog+" ops fail|cancel OPERATION -reason TEXT' ends an operation by hand ('"+env.Prog+" ops fail -h').")
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
		if err := CheckSubscription("-subscription", *sub); err != nil {
			return err
		}
	}
	s, conn, err := env.Connect(ctx, false, false)
	if err != nil {
		return err
	}
	defer s.Close()
	// The thresholds and deadlines the process applies, not the shell's.
	conn = withRecord(ctx, conn)
	cfg, from, err := judgeConfig(env.Getenv, conn)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	now := time.Now()
	rows, err := listOps(ctx, s, cfg, *sub, *active, now)
	if err != nil {
		return err
	}
	if env.Records != nil && (conn.Process != nil || conn.Idle != "") {
		rows = fromLog(ctx, s, env.Records, rows, *sub == "" && !*active, now)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].StartTime.After(rows[j].StartTime) })
	// Opened as a file: nothing works on what it lists.
	idle := conn.Idle != ""
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
	if idle {
		fmt.Fprintln(stdout, conn.Idle)
	}
	if d := settingsDiffer(env.Getenv, conn); d != "" {
		fmt.Fprintf(stdout, "judged with %s, not this shell's: %s\n", from, d)
	} else if conn.RecordNote != "" {
		fmt.Fprintf(stdout, "judged with %s: %s\n", from, conn.RecordNote)
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
	return opsTable(stdout, rows, *sub == "", idle, now)
}

// listOps is the listing's rows, unsorted: sub's operations (or, with sub
// empty, every subscription's active ones and those still notifying ARM),
// each active one with its outlook.
func listOps(ctx context.Context, s store.Store, cfg lifecycle.Config, sub string, active bool, now time.Time) ([]opRow, error) {
	var rows []opRow
	collect := func(items []store.Item) error {
		for _, it := range items {
			if kind, err := document.Sniff(it.Body); err != nil || kind != document.KindOperation {
				continue
			}
			op, err := document.ParseOperation(it.Body)
			if err != nil {
				rows = append(rows, unreadableRow(it.Body, err, now))
				continue
			}
			row := newOpRow(op, now)
			if (active || sub == "") && op.Properties.Status.IsTerminal() && !row.Notifying {
				continue
			}
			rows = append(rows, row)
		}
		return nil
	}
	var err error
	if sub == "" {
		err = s.ActiveOperations(ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, collect)
	} else {
		err = s.Partition(ctx, document.PartitionKey(sub), collect)
	}
	if err != nil {
		return nil, fmt.Errorf("listing operations: %w", err)
	}
	if err := outlooks(ctx, s, cfg, rows, now); err != nil {
		return nil, err
	}
	return rows, nil
}

func opsTable(w io.Writer, rows []opRow, withSubscription, idle bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "OPERATION\tREQUEST\tRESOURCE\tSTATUS\tAGE\tDEADLINE\tLAST ERROR"
	if withSubscription {
		head = "OPERATION\tSUBSCRIPTION\tREQUEST\tRESOURCE\tSTATUS\tAGE\tDEADLINE\tLAST ERROR"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		cols := []string{r.OperationID}
		if withSubscription {
			cols = append(cols, r.Subscription)
		}
		cols = append(cols, r.Request, resourceName(r.ResourceID), statusCell(r), Age(time.Duration(r.AgeSeconds*float64(time.Second))),
			deadlineCell(r, now), lastError(r, idle))
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	return tw.Flush()
}

// unreadableRow is the row of an operation document that does not parse:
// its id, why and since when, so nothing the tick skips hides.
func unreadableRow(body []byte, parseErr error, now time.Time) opRow {
	var d struct {
		ID           string `json:"id"`
		PartitionKey string `json:"partitionKey"`
		ResourceID   string `json:"resourceID"`
		TS           int64  `json:"_ts"`
		Properties   struct {
			Status     any `json:"status"`
			ExternalID any `json:"externalId"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(body, &d) // best effort: what it can of a broken document
	since := time.Unix(d.TS, 0).UTC()
	name := d.ID
	if i := strings.LastIndexByte(d.ResourceID, '/'); i >= 0 && i < len(d.ResourceID)-1 {
		name = d.ResourceID[i+1:]
	}
	status, _ := d.Properties.Status.(string)
	resource, _ := d.Properties.ExternalID.(string)
	return opRow{OperationID: name, Subscription: d.PartitionKey, Status: status, ResourceID: resource,
		StartTime: since, AgeSeconds: now.Sub(since).Seconds(),
		Unreadable: &unreadableDoc{DocumentID: d.ID, Error: parseErr.Error(), Since: since}}
}

// lastError is the operation's own error and an undelivered notification,
// else why it is retrying (or was, when the process last ran).
func lastError(r opRow, idle bool) string {
	if u := r.Unreadable; u != nil {
		return clip(fmt.Sprintf("unreadable since %s, skipped by every tick (doc get %s -subscription %s): %s",
			u.Since.Local().Format(time.DateTime), u.DocumentID, r.Subscription, u.Error), 300)
	}
	var parts []string
	if r.Error != nil {
		parts = append(parts, r.Error.Code+": "+r.Error.Message)
	}
	if r.Notification != nil {
		parts = append(parts, notificationText(r.Notification))
	}
	if len(parts) == 0 && r.LastProblem == nil && r.StuckSince != nil {
		parts = append(parts, stuckText(r)) // nothing says why: at least since when
	}
	if len(parts) == 0 && r.LastProblem != nil {
		s := r.LastProblem.Message
		if r.LastProblem.Error != "" {
			s += ": " + r.LastProblem.Error
		}
		prefix := "(retrying) "
		if idle {
			prefix = "(when it last ran) "
		}
		parts = append(parts, prefix+s)
	}
	if len(parts) == 0 {
		return "-"
	}
	return clip(strings.Join(parts, "; "), 200)
}

// resourceName names a resource below its subscription: "cluster
// rg/demo", "node pool rg/demo/np1"; anything else as it is.
func resourceName(id string) string {
	rid, err := document.ParseResourceID("resource", id)
	if err != nil {
		return id
	}
	kind, err := document.ResourceKind(rid.ResourceType.String())
	if err != nil {
		return id
	}
	name := rid.ResourceGroupName + "/" + rid.Name
	if kind != document.KindCluster && rid.Parent != nil {
		name = rid.ResourceGroupName + "/" + rid.Parent.Name + "/" + rid.Name
	}
	return kind.String() + " " + name
}

// Age is a duration the way kubectl shows one: 45s, 12m, 3h, 2d.
func Age(d time.Duration) string {
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
