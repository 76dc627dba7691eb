// Package embeddedtest opens throwaway embedded stores for other packages'
// tests. It lives apart from harness/testsupport because it imports the
// embedded store, whose own tests use testsupport.
package embeddedtest

import (
	"path/filepath"
	"testing"

	"github.com/hcpops/hcpops/harness/store/embedded"
)

// Open opens a fresh store in t's temporary directory with opts and closes
// it when the test ends, so no test leaks a file lock into the next.
func Open(t testing.TB, opts ...embedded.Option) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(filepath.Join(t.TempDir(), "store.db"), opts...)
	if err != nil {
		t.Fatalf("opening embedded store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
