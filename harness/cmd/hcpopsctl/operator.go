package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
	"github.com/hcpops/hcpops/harness/localstore"
	"github.com/hcpops/hcpops/internal/operator"
	"github.com/hcpops/hcpops/logging"
)

// localEnv runs the operator's commands (internal/operator, what the
// shipped hcpopsctl runs against Cosmos DB) on the developer's store: the
// running dev or serve's through its store API, Cosmos DB when configured
// here, else the embedded file; with that process's dev.log as its
// records and the place ops fail and cancel record what they did.
func localEnv(getenv func(string) string, stdin io.Reader, stdout io.Writer) operator.Env {
	dir := localstore.DataDir(getenv)
	return operator.Env{
		Prog: prog, Getenv: getenv, Stdin: stdin, Stdout: stdout, Local: true,
		About: "Cosmos DB when configured, else the running hcpopsctl dev/serve's store, else the embedded store in $HCPOPS_DATA_DIR",
		Connect: func(ctx context.Context, write, create bool) (store.Store, operator.Connection, error) {
			access := localstore.ReadOnly
			switch {
			case write && create:
				access = localstore.ReadWrite
			case write:
				access = localstore.WriteExisting
			}
			s, conn, err := connect(ctx, getenv, access)
			if err != nil {
				return nil, operator.Connection{}, err
			}
			oc := operator.Connection{Name: conn.Name, Server: "the next hcpopsctl dev or serve on " + conn.Name}
			if p := conn.Process; p != nil {
				oc.Process = &operator.Process{Command: p.Command, PID: p.PID, Settings: p.Settings}
			}
			if conn.File != "" {
				oc.Idle = fmt.Sprintf("no hcpopsctl dev or serve runs on %s: nothing works on these operations until one starts there", dir)
			}
			return s, oc, nil
		},
		Records: func(fn func(operator.Record), needles ...string) error { return devlog.Scan(dir, fn, needles...) },
		LogFiles: func() ([]string, error) {
			if cosmosConfigured(getenv) {
				return nil, errors.New("with Cosmos DB configured the process that ran the operation logged elsewhere: pass -log FILE, or run the history query of docs/operating.md in Application Insights")
			}
			files, err := devlog.Files(dir)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: history reads what hcpopsctl dev recorded there; for an app in Azure, pass -log FILE or use the history query of docs/operating.md", err)
			}
			return files, err
		},
		ActionLog: func() (*slog.Logger, func()) { return abandonLogger(dir) },
		Ticks: func() (string, func(context.Context) string, func()) {
			h := newHolder(dir)
			return filepath.Join(dir, devlog.File), h.status, h.close
		},
	}
}

// abandonLogger writes the lifecycle's records (operation.transition,
// operation.abandoned) to the data dir's log, where history and ops read
// them; without a data dir (Cosmos DB from elsewhere), to stderr.
func abandonLogger(dir string) (*slog.Logger, func()) {
	var w io.Writer = os.Stderr
	closeLog := func() {}
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		if f, _, err := devlog.Open(dir, 0); err == nil {
			w, closeLog = f, func() { _ = f.Close() }
		}
	}
	return slog.New(logging.Handler(slog.NewJSONHandler(w, nil))), closeLog
}
