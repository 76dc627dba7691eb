// Package atomicfile writes a file whole or not at all: a crash leaves
// the old content or the new, never half of either. The store's advert,
// the local trigger host's leases and the simulator's snapshot all rely
// on it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write puts data at path through a temporary file in the same directory
// (owner-only, synced, then renamed over path).
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; left over only on failure
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
