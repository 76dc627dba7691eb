package armsink

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/notification"
)

// controlSink POSTs one of the documented controls and returns the state
// the sink answers with.
func controlSink(t *testing.T, s *Sink, method, what string) (State, int) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL()+ControlPath+what, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st State
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
	}
	return st, resp.StatusCode
}

// The sink's documented controls, over HTTP as a person (or hcpopsctl
// sink) uses them, seen by the real notifier: refuse answers 403, fail
// n=2 fails the next two then delivers, hang holds a POST until the
// notifier's own timeout, and ok lets a held POST go, delivered.
func TestSinkControls(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := notification.New(notification.Config{AllowLoopback: true, Timeout: 200 * time.Millisecond}, nil)
	status := arm.OperationStatus{ID: "x", Name: "n", Status: arm.ProvisioningStateSucceeded}
	notify := func(label string) error { return n.Notify(ctx, s.URI(label), status) }

	if st, code := controlSink(t, s, http.MethodPost, "/refuse"); code != 200 || st.Mode != ModeRefuse {
		t.Fatalf("refuse: %d %+v", code, st)
	}
	if err := notify("refused"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a notification to a refusing sink: %v, want its 403", err)
	}
	controlSink(t, s, http.MethodPost, "/ok")
	if st, code := controlSink(t, s, http.MethodPost, "/fail?n=2"); code != 200 || st.FailNext != 2 || st.Mode != ModeOK {
		t.Fatalf("fail?n=2: %d %+v", code, st)
	}
	for i := range 2 {
		if err := notify("failing"); err == nil || !strings.Contains(err.Error(), "500") {
			t.Errorf("attempt %d: %v, want a 500", i+1, err)
		}
	}
	if err := notify("failing"); err != nil {
		t.Errorf("third attempt after fail n=2: %v, want delivered", err)
	}
	if got, _ := s.Delivered(s.URI("failing")); len(got) != 1 {
		t.Errorf("delivered at failing: %v, want one", got)
	}

	controlSink(t, s, http.MethodPost, "/hang")
	start := time.Now()
	if err := notify("hung"); err == nil || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("a notification to a hanging sink: %v, want the notifier's timeout", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("the hanging sink answered after %v, before the notifier's 200ms timeout", d)
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// The sink lets the POST whose caller gave up go, unanswered.
	if err := s.AwaitHolding(hctx, 0); err != nil {
		t.Fatal(err)
	}
	// A held POST goes, delivered, once the sink is told ok.
	done := make(chan error, 1)
	go func() {
		c := notification.New(notification.Config{AllowLoopback: true, Timeout: time.Minute}, nil)
		done <- c.Notify(ctx, s.URI("released"), status)
	}()
	if err := s.AwaitHolding(hctx, 1); err != nil {
		t.Fatal(err)
	}
	controlSink(t, s, http.MethodPost, "/ok")
	if err := <-done; err != nil {
		t.Errorf("the held POST after ok: %v, want delivered", err)
	}
	st, _ := controlSink(t, s, http.MethodGet, "")
	if st.Mode != ModeOK || st.Attempts != 5 || st.Failures != 3 {
		t.Errorf("state = %+v, want ok, 5 attempts answered (refused, 2 failed, delivered, released), 3 failures", st)
	}
	for _, bad := range []string{"/fail?n=0", "/fail", "/explode"} {
		if _, code := controlSink(t, s, http.MethodPost, bad); code == 200 {
			t.Errorf("POST %s%s answered 200, want it refused", ControlPath, bad)
		}
	}
}
