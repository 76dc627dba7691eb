// Package devlog is the log a local run keeps in its data dir (dev.log):
// appended across runs and rotated by size, so earlier history survives a
// restart, and read back by `hcpopsctl history` and `hcpopsctl ops`, which show
// what the running process recorded. Rotation is lumberjack's: the
// current file plus a few numbered-by-time backups beside it.
package devlog

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/hcpops/hcpops/internal/operator"
)

// File is the current log's name in the data dir.
const File = "dev.log"

// Defaults: a file is rotated at MaxMB and Backups older files are kept,
// so a data dir holds at most (Backups+1)*MaxMB of log.
const (
	MaxMB   = 10
	Backups = 5
)

// Open appends to dir's log, rotating it at maxMB (MaxMB when 0).
func Open(dir string, maxMB int) (io.WriteCloser, string, error) {
	if maxMB <= 0 {
		maxMB = MaxMB
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("creating the log's directory: %w", err)
	}
	path := filepath.Join(dir, File)
	// Opening once here makes a permission problem an error at start, not
	// a silent loss on the first write.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, "", fmt.Errorf("opening the log: %w", err)
	}
	f.Close()
	return &lumberjack.Logger{Filename: path, MaxSize: maxMB, MaxBackups: Backups}, path, nil
}

// Files are dir's log files, oldest first; the current one is last.
func Files(dir string) ([]string, error) {
	backups, err := filepath.Glob(filepath.Join(dir, strings.TrimSuffix(File, ".log")+"-*.log"))
	if err != nil {
		return nil, err
	}
	sort.Strings(backups) // lumberjack names backups by UTC time: sortable
	cur := filepath.Join(dir, File)
	if _, err := os.Stat(cur); err == nil {
		backups = append(backups, cur)
	}
	if len(backups) == 0 {
		return nil, fmt.Errorf("no log at %s: %w", cur, fs.ErrNotExist)
	}
	return backups, nil
}

// Record is one slog JSON line, as the operator's commands read it.
type Record = operator.Record

// Scan calls fn for each line of dir's logs, oldest first, that contains
// every one of needles (a cheap filter before a line is decoded). Lines
// that are not JSON objects (a panic's stack, say) are skipped.
func Scan(dir string, fn func(Record), needles ...string) error {
	files, err := Files(dir)
	if err != nil {
		return err
	}
	for _, path := range files {
		if err := scanFile(path, fn, needles); err != nil {
			return err
		}
	}
	return nil
}

func scanFile(path string, fn func(Record), needles []string) error {
	return operator.ScanFile(path, fn, needles...)
}

// Parse reads one slog JSON line; ok is false for a line that is no JSON
// object (a panic's stack, say).
func Parse(line []byte) (Record, bool) { return operator.ParseRecord(line) }
