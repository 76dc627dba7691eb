package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/hcpops/hcpops/core/lifecycle"
	polloperations "github.com/hcpops/hcpops/functions/pollOperations"
	"github.com/hcpops/hcpops/internal/cli"
)

// top shows what the poll timer is doing: its last ticks and what the
// latest saw active, read from the poll.tick and poll.active records the
// process writes (the records Application Insights gets from serve),
// refreshed as they come.
func top(ctx context.Context, env Env, args []string) error {
	stdout := env.Stdout
	const synopsis = "[-n TICKS] [-every DURATION] [-once] [-log FILE]"
	flags := cli.Command(env.Prog+" top", synopsis, "Shows the poll timer's last ticks: when, how long against the budget, what each saw active\n"+
		"and stuck, CS calls and errors, skips; and the latest tick's active operations by kind,\n"+
		"request and status. Read from the poll.tick and poll.active records the process writes (a\n"+
		"local run's $HCPOPS_DATA_DIR/dev.log; the records serve sends to Application Insights: -log\n"+
		"reads a file of them), refreshed every -every until interrupted, or printed once with -once.")
	n := flags.Int("n", 10, "how many ticks to show")
	every := flags.Duration("every", 2*time.Second, "refresh interval")
	once := flags.Bool("once", false, "print once and exit")
	logFile := flags.String("log", "", "a file of hcpops log records (default: the local process's log)")
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
	path := *logFile
	var process func(context.Context) string // nil: -log names a file, whose writer top cannot know
	if path == "" {
		if env.Ticks == nil {
			return errors.New("no process log here: pass -log FILE (the handler's JSON records, one a line), or run the tick queries of docs/functions.md in Application Insights")
		}
		var done func()
		path, process, done = env.Ticks()
		defer done()
	}
	tail := &logTail{path: path}
	v := &tickView{keep: *n}
	for {
		recs, err := tail.read()
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no log at %s: top reads the records the process writes there (for an app in Azure, -log FILE, or the tick queries of docs/functions.md)", path)
		}
		if err != nil {
			return err
		}
		v.add(recs)
		var b bytes.Buffer
		if !*once {
			b.WriteString("\x1b[H\x1b[2J") // home and clear: a screen that refreshes in place
		}
		line := ""
		if process != nil {
			line = process(ctx)
		}
		v.render(&b, env.Prog, path, line, time.Now())
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

// logTail reads the records appended to a log since the last read,
// starting near its end; a file rotated meanwhile is read from its start.
type logTail struct {
	path    string
	off     int64
	partial []byte
}

// tailStart is how far from the end a first read starts.
const tailStart = 4 << 20

func (t *logTail) read() ([]Record, error) {
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
	var out []Record
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"poll.`)) {
			continue
		}
		if r, ok := ParseRecord(l); ok && (r.Msg == polloperations.MsgTick || r.Msg == lifecycle.MsgActive) {
			out = append(out, r)
		}
	}
	return out, nil
}

// tickRow is one tick: its poll.tick record and its poll.active record
// (the same invocation's).
type tickRow struct {
	tick, active Record
}

// tickView holds the last ticks.
type tickView struct {
	keep    int
	rows    []tickRow
	pending map[string]Record // poll.active by invocation, until its tick's record
}

func (v *tickView) add(recs []Record) {
	if v.pending == nil {
		v.pending = map[string]Record{}
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
