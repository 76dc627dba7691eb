package devlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The log is appended to across opens and rotated by size; Scan reads
// every file oldest first and skips what is not a record.
func TestAppendRotateScan(t *testing.T) {
	dir := t.TempDir()
	write := func(from, n int) {
		w, path, err := Open(dir, 1)
		if err != nil {
			t.Fatal(err)
		}
		if path != filepath.Join(dir, File) {
			t.Fatalf("path %s", path)
		}
		pad := strings.Repeat("x", 1000)
		for i := from; i < from+n; i++ {
			fmt.Fprintf(w, `{"time":"2026-03-14T01:59:26.5Z","level":"INFO","msg":"m","operation_id":"op-%d","pad":"%s"}`+"\n", i, pad)
		}
		w.Close()
	}
	write(0, 10)
	write(10, 10) // a restart appends
	var got []string
	if err := Scan(dir, func(r Record) { got = append(got, r.OperationID) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 || got[0] != "op-0" || got[19] != "op-19" {
		t.Fatalf("after two opens: %v", got)
	}
	write(20, 1500) // about 1.5 MB: one rotation at 1 MB
	files, err := Files(dir)
	if err != nil || len(files) != 2 || !strings.HasSuffix(files[1], File) {
		t.Fatalf("files %v %v, want one backup and the current log", files, err)
	}
	// Garbage and an overlong line in the current file are skipped.
	f, _ := os.OpenFile(files[1], os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "panic: not json\n%s\n", strings.Repeat("y", (1<<20)+10)) // over the reader's 1 MiB line bound
	fmt.Fprintln(f, `{"time":"2026-03-14T01:59:27Z","level":"WARN","msg":"last","operation_id":"op-last"}`)
	f.Close()
	got = got[:0]
	var last Record
	if err := Scan(dir, func(r Record) { got = append(got, r.OperationID); last = r }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1521 || got[0] != "op-0" || got[1519] != "op-1519" || !last.Problem() || last.Time.Second() != 27 {
		t.Fatalf("after rotation: %d records, first %s, last %+v", len(got), got[0], last)
	}
	n := 0
	if err := Scan(dir, func(Record) { n++ }, `"level":"WARN"`); err != nil || n != 1 {
		t.Fatalf("filtered scan: %d %v", n, err)
	}
	if err := Scan(t.TempDir(), func(Record) {}); err == nil || !strings.Contains(err.Error(), "no log at") {
		t.Fatalf("empty dir: %v", err)
	}
}
