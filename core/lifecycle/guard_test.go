package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"testing"
)

// TestWriteGuarded: one re-read after a stale write, never two; a gone
// document ends the attempt quietly; other errors are not retried.
func TestWriteGuarded(t *testing.T) {
	errStale, errOther := errors.New("412"), errors.New("503")
	tests := []struct {
		name        string
		answers     []error // what each write returns, in turn
		gone        bool    // reread finds the document gone
		wantWrites  int
		wantRereads int
		wantWrote   bool
		wantErr     error
	}{
		{"first write lands", []error{nil}, false, 1, 0, true, nil},
		{"stale once", []error{errStale, nil}, false, 2, 1, true, nil},
		{"stale twice", []error{errStale, errStale}, false, 2, 1, false, errRetryLater},
		{"gone on re-read", []error{errStale}, true, 1, 1, false, nil},
		{"other error", []error{errOther}, false, 1, 0, false, errOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writes, rereads := 0, 0
			out, wrote, err := writeGuarded(context.Background(), slog.New(slog.DiscardHandler), 1,
				func(v int) (int, bool, error) {
					err := tc.answers[writes]
					writes++
					if err != nil {
						return 0, false, err
					}
					return v * 10, true, nil
				},
				func(err error) bool { return errors.Is(err, errStale) },
				func(_ context.Context, v int) (int, bool, error) {
					rereads++
					return v + 1, !tc.gone, nil
				})
			if writes != tc.wantWrites || rereads != tc.wantRereads || wrote != tc.wantWrote {
				t.Errorf("writes %d, rereads %d, wrote %v; want %d, %d, %v", writes, rereads, wrote, tc.wantWrites, tc.wantRereads, tc.wantWrote)
			}
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.name == "stale once" && out != 20 {
				t.Errorf("out = %d, want the re-read value written (20)", out)
			}
		})
	}
}
