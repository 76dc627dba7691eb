package operator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// ParseRecord reads one slog JSON line; ok is false for a line that is no
// JSON object (a panic's stack, say).
func ParseRecord(line []byte) (r Record, ok bool) {
	var attrs map[string]any
	if json.Unmarshal(line, &attrs) != nil || attrs == nil {
		return Record{}, false
	}
	r = Record{Attrs: attrs}
	r.Level, r.Msg, r.OperationID = r.Str("level"), r.Str("msg"), r.Str("operation_id")
	r.Time, _ = time.Parse(time.RFC3339Nano, r.Str("time"))
	return r, true
}

// ScanFile calls fn for each record of the file at path, in order, that
// holds every one of needles (a cheap filter before a line is decoded);
// lines that are not JSON objects are skipped, and a file gone meanwhile
// (rotated away) holds none.
func ScanFile(path string, fn func(Record), needles ...string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64*1024)
lines:
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		for _, n := range needles {
			if !bytes.Contains(line, []byte(n)) {
				continue lines
			}
		}
		if r, ok := ParseRecord(line); ok {
			fn(r)
		}
	}
}

// maxLine bounds one line; a longer one (not a record slog writes) is
// skipped rather than held.
const maxLine = 1 << 20

// readLine returns the next line without its newline; an overlong line
// comes back empty.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if long = long || len(buf)+len(chunk) > maxLine; !long {
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && len(buf) == 0 && !long:
			return nil, err
		case long:
			return nil, nil
		}
		return bytes.TrimRight(buf, "\r\n"), nil
	}
}
