package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/internal/cli"
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
// the process that ran it recorded them: for a local run, its log in the
// data dir; for an app in Azure, a file of the handler's records (-log), or
// the history query of docs/operating.md in Application Insights.
func history(ctx context.Context, env Env, args []string) error {
	stdout := env.Stdout
	const synopsis = "OPERATION (its UUID, with or without -subscription, or the status path or URL submit printed)"
	flags := cli.Command(env.Prog+" history", synopsis, "Prints an operation's history: its dispatch, each transition with the time spent in the\n"+
		"state it left and since it started, its ARM notifications, and every warning logged about\n"+
		"it. Read from the log of the process that ran it (a local run's $HCPOPS_DATA_DIR/dev.log and\n"+
		"its rotated files), or from -log FILE: the handler's JSON records one a line (its log stream,\n"+
		"or the message column of Application Insights' traces); in Application Insights itself, run\n"+
		"the history query of docs/operating.md.")
	sub := flags.String("subscription", "", "subscription ID (optional with a bare UUID: its operation's request and resource are then read from the store too)")
	logFile := flags.String("log", "", "read the records from this file instead of the local process's log")
	pos, err := cli.Parse(flags, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(flags, synopsis)
	}
	name, ok := document.CanonicalUUID(pos[0])
	var ref OperationRef
	switch {
	case ok && *sub != "":
		// As status and ops fail take it: the UUID in that subscription.
		if ref, err = ParseOperationRef(pos[0], *sub); err != nil {
			return err
		}
	case !ok:
		if ref, err = ParseOperationRef(pos[0], *sub); err != nil {
			return err
		}
		name = ref.Name
	}
	var files []string
	scan := env.Records
	switch {
	case *logFile != "":
		files = []string{*logFile}
		scan = func(fn func(Record), needles ...string) error { return ScanFile(*logFile, fn, needles...) }
	case env.LogFiles == nil || env.Records == nil:
		return errors.New("no process log here: pass -log FILE (the handler's JSON records, one a line), or run the history query of docs/operating.md in Application Insights")
	default:
		if files, err = env.LogFiles(); err != nil {
			return err
		}
	}
	rows, err := historyOf(scan, name)
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
		if s, _, err := env.Connect(ctx, false, false); err == nil {
			if op, err := ReadOperation(ctx, s, ref); err == nil {
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
			in = Round(r.inState)
		}
		if r.hasSince {
			since = Round(r.sinceStart)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.at.Local().Format("2006-01-02 15:04:05.000"), r.event, in, since, orDash(r.detail))
	}
	return tw.Flush()
}

// historyOf reads the log for one operation's events, oldest first.
func historyOf(scan func(func(Record), ...string) error, name string) ([]historyRow, error) {
	var rows []historyRow
	var lastTransition time.Duration // since start, at the previous transition
	var start time.Time
	err := scan(func(r Record) {
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

// Round shows a duration to the tenth of a second below a minute.
func Round(d time.Duration) string {
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
