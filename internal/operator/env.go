// Package operator holds the operator's commands (ops, ops fail and
// cancel, status, doc get, list and put): what an SRE runs against the
// store a running hcpops serves. Two binaries build them: cmd/hcpopsctl,
// the operator CLI that ships, on Cosmos DB with the Function App's own
// settings; and the developer binary in harness/, which adds the local
// store, its process's log and the local tools. A build supplies an Env.
package operator

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// Env is what a build supplies the commands.
type Env struct {
	// Prog names the binary in messages and usages.
	Prog   string
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	// Connect opens the store the commands work on; write says the
	// command writes, create that it may create a store where none is
	// (doc put -create, a local build only).
	Connect func(ctx context.Context, write, create bool) (store.Store, Connection, error)
	// Records reads the serving process's log, oldest first, the lines
	// holding every needle; nil when the build has none to read (an app in
	// Azure logs to Application Insights).
	Records func(fn func(Record), needles ...string) error
	// LogFiles names the files Records reads, oldest first, for a reader;
	// an error says why there are none (nil: this build has no log).
	LogFiles func() ([]string, error)
	// Ticks is where top reads the poll timer's records by default, a
	// line on the process writing them (nil: unknown), and what to close
	// when done; nil: this build has no such log (top needs -log).
	Ticks func() (path string, process func(context.Context) string, done func())
	// ActionLog is where ops fail and cancel write their records, and how
	// to close it; nil writes them to stderr.
	ActionLog func() (*slog.Logger, func())
	// About says where the commands read from, for their usages.
	About string
	// Local: the build reaches a local store, which doc put -create may
	// create.
	Local bool
}

// Connection is the store a command reached.
type Connection struct {
	// Name names it for messages.
	Name string
	// Process is the running process that serves it, when one announces
	// itself (a local dev or serve); nil for Cosmos DB reached directly.
	Process *Process
	// Recorded is the settings the Function App recorded in the database
	// (core/appsettings), when no Process announces its own; nil when
	// there is none, and RecordNote says why.
	Recorded   *Recorded
	RecordNote string
	// LoadRecord reads Recorded and RecordNote, for the commands that
	// judge (ops, ops fail and cancel) and only when they do; nil when
	// the build has no record to read.
	LoadRecord func(context.Context) (*Recorded, string)
	// Server names who works on the store when no Process announces
	// itself: "the Function App's poll timer", "the next hcpopsctl dev or
	// serve on .data".
	Server string
	// Idle, when set, says that nothing processes the store (a local file
	// opened directly) and where: the commands print it.
	Idle string
}

// Process is what a serving process announces of itself.
type Process struct {
	Command string
	PID     int
	// Settings are the settings it judges operations with (lifecycle's
	// HCPOPS_* names, unset ones ""), which the commands judge with too.
	Settings map[string]string
}

// Recorded is what a serving process recorded of its judging settings.
type Recorded struct {
	Settings map[string]string
	At       time.Time
	// By names the instance that wrote them.
	By string
}

// Record is one line of a process's slog JSON log.
type Record struct {
	Time        time.Time
	Level       string
	Msg         string
	OperationID string
	// Attrs holds every member of the line, the above included.
	Attrs map[string]any
}

// Str is the string attribute k, or "".
func (r Record) Str(k string) string { s, _ := r.Attrs[k].(string); return s }

// Num is the number attribute k, or 0.
func (r Record) Num(k string) float64 { f, _ := r.Attrs[k].(float64); return f }

// Problem reports whether the line is a warning or an error.
func (r Record) Problem() bool { return r.Level == "WARN" || r.Level == "ERROR" }

// Commands are the commands Run takes, with a line each for a usage.
var Commands = []struct{ Name, About string }{
	{"status", "print an operation's ARM status body"},
	{"ops", "list operations as a table: what is active, what failed and why"},
	{"ops fail", "end an active operation by hand: Failed, OperationAbandoned (docs/runbooks.md)"},
	{"ops cancel", "the same, Canceled"},
	{"history", "print an operation's transitions with times and durations, from a log of its records"},
	{"top", "the poll timer's last ticks and what they saw active, from a log of its records"},
	{"doc", "get, put or list raw documents in the store"},
}

// Run runs one of Commands; ok is false for a command it does not have.
func Run(ctx context.Context, env Env, cmd string, args []string) (ok bool, err error) {
	switch cmd {
	case "status":
		return true, status(ctx, env, args)
	case "ops":
		return true, ops(ctx, env, args)
	case "doc":
		return true, doc(ctx, env, args)
	case "history":
		return true, history(ctx, env, args)
	case "top":
		return true, top(ctx, env, args)
	}
	return false, nil
}
