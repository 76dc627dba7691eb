package armsink

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Mode is how the sink answers a valid POST once the FailNext count is
// spent.
type Mode string

const (
	// ModeOK answers 200 (or 500 at the configured FailRate).
	ModeOK Mode = "ok"
	// ModeRefuse answers 403, as an ARM that will not take the
	// notification: the notifier counts a failure and retries later.
	ModeRefuse Mode = "refuse"
	// ModeHang holds each POST unanswered until its caller gives up (the
	// notifier's timeout) or the mode changes.
	ModeHang Mode = "hang"
)

// ControlPath is the root of the sink's controls, beside the
// notification URIs (URI puts those under /notify/):
//
//	GET  /_sink            the state: mode, POSTs still to fail, counts
//	POST /_sink/ok         answer 200 again (and let hung POSTs go)
//	POST /_sink/refuse     answer every POST 403
//	POST /_sink/hang       hold every POST until its caller gives up
//	POST /_sink/fail?n=N   answer the next N POSTs 500, then as the mode says
//
// Each answers with the state after it.
const ControlPath = "/_sink"

// State is what GET /_sink answers.
type State struct {
	Mode     Mode `json:"mode"`
	FailNext int  `json:"failNext"`
	Attempts int  `json:"attempts"`
	Failures int  `json:"failures"`
	// Holding is how many POSTs the sink holds unanswered now (hang).
	Holding int `json:"holding"`
}

// SetMode changes how the sink answers from the next POST on; leaving
// ModeHang lets the POSTs it holds go, answered as m says.
func (s *Sink) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == ModeHang && m != ModeHang {
		close(s.release)
		s.release = make(chan struct{})
	}
	s.mode = m
}

// State is the sink's mode and counts.
func (s *Sink) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return State{Mode: s.mode, FailNext: s.failLeft, Attempts: s.attempts, Failures: s.failures, Holding: s.holding}
}

// hang holds a POST while the sink is in ModeHang; false when the caller
// gave up first.
func (s *Sink) hang(ctx context.Context) bool {
	for {
		s.mu.Lock()
		if s.mode != ModeHang {
			s.mu.Unlock()
			return true
		}
		release := s.release
		s.holding++
		s.changedHolding()
		s.mu.Unlock()
		var gaveUp bool
		select {
		case <-release:
		case <-ctx.Done():
			gaveUp = true
		}
		s.mu.Lock()
		s.holding--
		s.changedHolding()
		s.mu.Unlock()
		if gaveUp {
			return false
		}
	}
}

// changedHolding wakes AwaitHolding; s.mu is held.
func (s *Sink) changedHolding() {
	close(s.held)
	s.held = make(chan struct{})
}

// AwaitHolding waits until the sink holds exactly n POSTs, or ctx is done.
// Waiting for 0 after a caller gave up matters: the sink sees a closed
// connection only some time after the caller closed it, and a POST still
// held would be answered, and counted, when the sink is told ok.
func (s *Sink) AwaitHolding(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		holding, changed := s.holding, s.held
		s.mu.Unlock()
		if holding == n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the sink to hold %d POSTs (it holds %d): %w", n, holding, context.Cause(ctx))
		}
	}
}

func (s *Sink) control(w http.ResponseWriter, r *http.Request) {
	what := strings.Trim(strings.TrimPrefix(r.URL.Path, ControlPath), "/")
	switch {
	case what == "" && r.Method == http.MethodGet:
	case r.Method != http.MethodPost:
		http.Error(w, "sink controls are POSTed (GET "+ControlPath+" reads the state)", http.StatusMethodNotAllowed)
		return
	case what == string(ModeOK) || what == string(ModeRefuse) || what == string(ModeHang):
		s.SetMode(Mode(what))
	case what == "fail":
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 {
			http.Error(w, fmt.Sprintf("fail: n %q: want a whole number of POSTs, 1 or more", r.URL.Query().Get("n")), http.StatusBadRequest)
			return
		}
		s.FailNext(n)
	default:
		http.Error(w, fmt.Sprintf("no sink control %q: want ok, refuse, hang or fail?n=N", what), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.State())
}
