package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
	"github.com/hcpops/hcpops/internal/cli"
	"github.com/hcpops/hcpops/internal/operator"
)

// historyRow is one event of an operation's history.
type historyRow struct {
	at         time.Time
	event      string
	inState    time.Duration // for a transition: time spent in the state it left
	sinceStart time.Duration
	hasSince   bool
	detail     string
}

// history prints an operation's transitions with times and durations, as
// the running process recorded them: for hcpopsctl dev, its log in the data
// dir; under Azure Functions, the same table comes from Application
// Insights with the history query of docs/operating.md.
func history(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	const synopsis = "OPERATION (its UUID, with or without -subscription, or the status path or URL submit printed)"
	flags := cli.Command(prog+" history", synopsis, "Prints an operation's history: its dispatch, each transition with the time spent in the\n"+
		"state it left and since it started, its ARM notifications, and every warning logged about\n"+
		"it. Read from what hcpopsctl dev recorded in $HCPOPS_DATA_DIR/dev.log (and its rotated files);\n"+
		"for an app in Azure, run the history query of docs/operating.md in Application Insights.")
	sub := flags.String("subscription", "", "subscription ID (optional with a bare UUID: its operation's request and resource are then read from the store too)")
	pos, err := cli.Parse(flags, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(flags, synopsis)
	}
	name, ok := document.CanonicalUUID(pos[0])
	var ref operator.OperationRef
	switch {
	case ok && *sub != "":
		// As status and ops fail take it: the UUID in that subscription.
		if ref, err = operator.ParseOperationRef(pos[0], *sub); err != nil {
			return err
		}
	case !ok:
		if ref, err = operator.ParseOperationRef(pos[0], *sub); err != nil {
			return err
		}
		name = ref.Name
	}
	if cosmosConfigured(getenv) {
		return errors.New("with Cosmos DB configured the process that ran the operation logged elsewhere: run the history query of docs/operating.md in Application Insights")
	}
	dir := localstore.DataDir(getenv)
	files, err := devlog.Files(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: history reads what hcpopsctl dev recorded there; for an app in Azure, use the history query of docs/operating.md", err)
	}
	if err != nil {
		return err
	}
	rows, err := historyOf(dir, name)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("nothing recorded about operation %s in %s (it ran in another data dir or process, or its lines were rotated away)", name, strings.Join(files, ", "))
	}
	fmt.Fprintf(stdout, "operation %s\nrecorded  %s\n", name, files[len(files)-1])
	if len(files) > 1 {
		fmt.Fprintf(stdout, "          and %d older file(s) beside it\n", len(files)-1)
	}
	if ref.Subscription != "" {
		if s, _, err := connect(ctx, getenv, localstore.ReadOnly); err == nil {
			if op, err := operator.ReadOperation(ctx, s, ref); err == nil {
				fmt.Fprintf(stdout, "request   %s %s\nnow       %s\n", op.Properties.Request, op.Properties.ExternalID, op.Properties.Status)
			}
			s.Close()
		}
	}
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tIN STATE\tSINCE START\tDETAIL")
	for _, r := range rows {
		in, since := "-", "-"
		if r.inState > 0 {
			in = round(r.inState)
		}
		if r.hasSince {
			since = round(r.sinceStart)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.at.Local().Format("2006-01-02 15:04:05.000"), r.event, in, since, orDash(r.detail))
	}
	return tw.Flush()
}

// historyOf reads the log for one operation's events, oldest first.
func historyOf(dir, name string) ([]historyRow, error) {
	var rows []historyRow
	var lastTransition time.Duration // since start, at the previous transition
	var start time.Time
	err := devlog.Scan(dir, func(r devlog.Record) {
		if r.OperationID != name {
			return
		}
		row := historyRow{at: r.Time}
		if s, ok := r.Attrs["seconds_since_start"].(float64); ok {
			row.sinceStart, row.hasSince = time.Duration(s*float64(time.Second)), true
			start = r.Time.Add(-row.sinceStart)
		} else if !start.IsZero() {
			row.sinceStart, row.hasSince = r.Time.Sub(start), true
		}
		switch {
		case r.Msg == lifecycle.MsgTransition:
			row.event = r.Str("from") + " -> " + r.Str("to")
			row.inState = row.sinceStart - lastTransition
			lastTransition = row.sinceStart
			row.detail = r.Str("error_code")
			if m := r.Str("error_message"); m != "" {
				row.detail += ": " + m
			}
		case r.Msg == lifecycle.MsgDispatched:
			row.event = "dispatched by " + orDash(r.Str("function"))
			row.detail = r.Str("cluster_service_id")
		case r.Msg == lifecycle.MsgNotification:
			row.event = "notification " + r.Str("outcome")
			row.detail = "host " + r.Str("host")
			if e := r.Str("error"); e != "" {
				row.detail += ": " + e
			}
		case r.Problem():
			row.event = strings.ToLower(r.Level) + ": " + r.Msg
			row.detail = r.Str("error")
			if row.detail == "" {
				row.detail = r.Str("reason")
			}
		default:
			return
		}
		rows = append(rows, row)
	}, name)
	// Lines before the first one that knew the start (a failed dispatch)
	// get theirs once it is known.
	for i := range rows {
		if !rows[i].hasSince && !start.IsZero() {
			rows[i].sinceStart, rows[i].hasSince = rows[i].at.Sub(start), true
		}
	}
	return rows, err
}

// round shows a duration to the tenth of a second below a minute.
func round(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
