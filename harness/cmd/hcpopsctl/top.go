package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/core/lifecycle"
	polloperations "github.com/hcpops/hcpops/functions/pollOperations"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
	"github.com/hcpops/hcpops/harness/storeapi"
	"github.com/hcpops/hcpops/internal/cli"
)

// top shows what the poll timer is doing: its last ticks and what the
// latest saw active, read from the poll.tick and poll.active records the
// process writes (the records Application Insights gets from serve),
// refreshed as they come.
func top(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	const synopsis = "[-n TICKS] [-every DURATION] [-once] [-log FILE]"
	flags := cli.Command(prog+" top", synopsis, "Shows the poll timer's last ticks: when, how long against the budget, what each saw active\n"+
		"and stuck, CS calls and errors, skips; and the latest tick's active operations by kind,\n"+
		"request and status. Read from the poll.tick and poll.active records hcpopsctl dev writes to\n"+
		"$HCPOPS_DATA_DIR/dev.log (the records serve sends to Application Insights; -log reads\n"+
		"another file of them), refreshed every -every until interrupted, or printed once with -once.")
	n := flags.Int("n", 10, "how many ticks to show")
	every := flags.Duration("every", 2*time.Second, "refresh interval")
	once := flags.Bool("once", false, "print once and exit")
	logFile := flags.String("log", "", "a file of hcpops log records (default: $HCPOPS_DATA_DIR/dev.log)")
	pos, err := cli.Parse(flags, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return fmt.Errorf("unexpected arguments %q", pos)
	case *n < 1:
		return fmt.Errorf("-n %d: want 1 or more", *n)
	case *every < 100*time.Millisecond:
		return fmt.Errorf("-every %s: want 100ms or more", *every)
	}
	dir := localstore.DataDir(getenv)
	path := *logFile
	if path == "" {
		path = filepath.Join(dir, devlog.File)
	}
	tail := &logTail{path: path}
	v := &tickView{keep: *n}
	var proc *holder // nil: -log names a file, whose writer top cannot know
	if *logFile == "" {
		proc = newHolder(dir)
		defer proc.close()
	}
	for {
		recs, err := tail.read()
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no log at %s: top reads what hcpopsctl dev records there (for an app in Azure, the tick queries of docs/functions.md)", path)
		}
		if err != nil {
			return err
		}
		v.add(recs)
		var b bytes.Buffer
		if !*once {
			b.WriteString("\x1b[H\x1b[2J") // home and clear: a screen that refreshes in place
		}
		process := ""
		if proc != nil {
			process = proc.status(ctx)
		}
		v.render(&b, path, process, time.Now())
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return err
		}
		if *once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(*every):
		}
	}
}

// holder follows the process that holds dir's store, for top's second
// line. It dials the store API once and, on each refresh, asks the same
// client to prove itself (one request on a kept connection) instead of
// reading and checking the advert again; it dials afresh only when that
// fails: the process ended, or another took its place.
type holder struct {
	dir  string
	dial func(ctx context.Context, dir string, timeout time.Duration) (*storeapi.Client, storeapi.Advert, error)
	c    *storeapi.Client
	a    storeapi.Advert
}

func newHolder(dir string) *holder { return &holder{dir: dir, dial: storeapi.Dial} }

// status says whether a dev or serve holds dir now.
func (h *holder) status(ctx context.Context) string {
	if h.c != nil {
		if pid, err := h.c.Prove(ctx, time.Second); err == nil && pid == h.a.PID {
			return h.line()
		}
		h.c.Close()
		h.c = nil
	}
	c, a, err := h.dial(ctx, h.dir, time.Second)
	if err != nil {
		return "no hcpopsctl dev or serve runs on " + h.dir + ": no ticks will come until one starts there"
	}
	h.c, h.a = c, a
	return h.line()
}

func (h *holder) line() string {
	return fmt.Sprintf("%s (pid %d) runs on %s", h.a.Command, h.a.PID, h.dir)
}

// close releases the held client.
func (h *holder) close() {
	if h.c != nil {
		h.c.Close()
		h.c = nil
	}
}

// logTail reads the records appended to a log since the last read,
// starting near its end; a file rotated meanwhile is read from its start.
type logTail struct {
	path    string
	off     int64
	partial []byte
}

// tailStart is how far from the end a first read starts.
const tailStart = 4 << 20

func (t *logTail) read() ([]devlog.Record, error) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	skipFirst := false
	if st.Size() < t.off { // rotated: a new file
		t.off, t.partial = 0, nil
	}
	if t.off == 0 && st.Size() > tailStart {
		t.off, skipFirst = st.Size()-tailStart, true
	}
	data := make([]byte, st.Size()-t.off)
	if _, err := f.ReadAt(data, t.off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", t.path, err)
	}
	t.off = st.Size()
	lines := bytes.Split(append(t.partial, data...), []byte("\n"))
	t.partial = append([]byte(nil), lines[len(lines)-1]...)
	lines = lines[:len(lines)-1]
	if skipFirst && len(lines) > 0 {
		lines = lines[1:] // begun mid-line
	}
	var out []devlog.Record
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"poll.`)) {
			continue
		}
		if r, ok := devlog.Parse(l); ok && (r.Msg == polloperations.MsgTick || r.Msg == lifecycle.MsgActive) {
			out = append(out, r)
		}
	}
	return out, nil
}

// tickRow is one tick: its poll.tick record and its poll.active record
// (the same invocation's).
type tickRow struct {
	tick, active devlog.Record
}

// tickView holds the last ticks.
type tickView struct {
	keep    int
	rows    []tickRow
	pending map[string]devlog.Record // poll.active by invocation, until its tick's record
}

func (v *tickView) add(recs []devlog.Record) {
	if v.pending == nil {
		v.pending = map[string]devlog.Record{}
	}
	for _, r := range recs {
		inv := r.Str("invocation_id")
		if r.Msg == lifecycle.MsgActive {
			v.pending[inv] = r
			continue
		}
		v.rows = append(v.rows, tickRow{tick: r, active: v.pending[inv]})
		delete(v.pending, inv)
	}
	if len(v.rows) > v.keep {
		v.rows = v.rows[len(v.rows)-v.keep:]
	}
	if len(v.pending) > 100 { // actives whose tick record never came (a crash)
		clear(v.pending)
	}
}
