package lifecycle

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// TestDeferredAttrsWriteTheSameLines: a logger whose attributes wait for a
// record writes exactly what slog's own With writes, through attributes
// added later, groups and levels.
func TestDeferredAttrsWriteTheSameLines(t *testing.T) {
	fixed := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Time(slog.TimeKey, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		}
		return a
	}
	attrs := []slog.Attr{slog.String("operation_id", "op"), slog.String("resource_id", "/subscriptions/s/x"), slog.Int("n", 3)}
	for name, newHandler := range map[string]func(*bytes.Buffer) slog.Handler{
		"json": func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: fixed})
		},
		"text": func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: fixed})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var want, got bytes.Buffer
			eager := slog.New(newHandler(&want)).With(attrsToArgs(attrs)...)
			lazy := slog.New(&deferredAttrs{base: newHandler(&got), attrs: attrs})
			op := &document.OperationDocument{ResourceID: "/subscriptions/s/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/op-1"}
			op.Properties.ExternalID, op.Properties.Request = "/subscriptions/s/x", document.RequestCreate
			opAttrs := []slog.Attr{slog.String("operation_id", "op-1"), slog.String("resource_id", "/subscriptions/s/x"), slog.String("request", "Create")}
			eagerOp := slog.New(newHandler(&want)).With(attrsToArgs(opAttrs)...)
			lazyOp := new(opLog).init(newHandler(&got), op)
			for _, l := range []*slog.Logger{eager, eagerOp, lazy, lazyOp} {
				l.Info("plain", "k", "v")
				l.Debug("below the level")
				l.With("invocation_id", "inv").Warn("with more")
				l.WithGroup("g").With("in", "group").Error("grouped", "k", 1)
			}
			if want.String() != got.String() {
				t.Errorf("lines differ\nslog With:\n%s\ndeferred:\n%s", want.String(), got.String())
			}
			if want.Len() == 0 || bytes.Contains(got.Bytes(), []byte("below the level")) {
				t.Errorf("levels not honoured:\n%s", got.String())
			}
		})
	}
	if (&deferredAttrs{base: slog.DiscardHandler}).Enabled(context.Background(), slog.LevelError) {
		t.Error("Enabled does not follow the base handler")
	}
	if (&opAttrs{base: slog.DiscardHandler}).Enabled(context.Background(), slog.LevelError) {
		t.Error("the operation logger's Enabled does not follow the base handler")
	}
}

func attrsToArgs(attrs []slog.Attr) []any {
	out := make([]any, len(attrs))
	for i, a := range attrs {
		out[i] = a
	}
	return out
}
