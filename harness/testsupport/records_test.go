package testsupport

import (
	"log/slog"
	"testing"
)

func TestRecords(t *testing.T) {
	var recs Records
	log := slog.New(slog.NewJSONHandler(&recs, nil))
	log.Info("other", "n", 1)
	go log.Warn("summary", "documents", 3, "outcome", "ok")
	r := recs.Wait(t, "summary")
	WantAttrs(t, r, map[string]any{"level": "WARN", "documents": 3, "outcome": "ok"})

	// WantAttrs must report a mismatch, or every caller's check is hollow.
	var ft fakeT
	WantAttrs(&ft, r, map[string]any{"documents": 4})
	if !ft.failed {
		t.Error("WantAttrs accepted documents=4 for a record with documents=3")
	}
}

// fakeT records a failure without failing the outer test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
