package triggerhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hcpops/hcpops/harness/atomicfile"
)

// stateDir holds what the real host keeps in its storage account: change
// feed leases (continuations) and timer schedule status, one small JSON file
// each, so a restarted host resumes where it stopped.
type stateDir string

func (d stateDir) path(kind, name string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	return filepath.Join(string(d), kind, safe+".json")
}

// load reads a state file into v; found is false when there is none yet.
func (d stateDir) load(kind, name string, v any) (found bool, err error) {
	p := d.path(kind, name)
	raw, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("%s is not valid state (delete it to start over): %w", p, err)
	}
	return true, nil
}

// save writes v atomically (temp file + rename), so a crash leaves the old
// state or the new one, never half of either.
func (d stateDir) save(kind, name string, v any) error {
	p := d.path(kind, name)
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", p, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	return atomicfile.Write(p, append(raw, '\n'))
}
