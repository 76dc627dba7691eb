package dst

import (
	"encoding/json"
	"io"
	"net/http"
	"path"
	"sync"

	"github.com/hcpops/hcpops/core/arm"
)

// sinkURL is ARM's notification endpoint as the runs name it: a loopback
// address the notifier accepts, served in memory.
const sinkURL = "http://127.0.0.1:9"

// sink is ARM's notification endpoint: every POST parks at the gate, a
// notify fault window refuses, fails or hangs it, and the deliveries it
// answered 2xx are counted by URI.
type sink struct {
	w *world

	mu        sync.Mutex
	delivered map[string][]arm.ProvisioningState
	// again counts, by URI label, deliveries made while the store still
	// held the notification owed after an earlier one.
	again map[string]int
}

func newSink(w *world) *sink {
	return &sink{w: w, delivered: map[string][]arm.ProvisioningState{}, again: map[string]int{}}
}

// redelivered is how many of label's deliveries came while the store
// still held the notification owed after an earlier one.
func (s *sink) redelivered(label string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.again[label]
}

func (s *sink) uri(label string) string { return sinkURL + "/notify/" + label }

func (s *sink) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	s.w.sched.gate(ctx, "arm POST "+req.URL.Path)
	body, err := io.ReadAll(req.Body)
	closeBody(req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f := s.w.faults.active(faultNotify, ""); f != nil {
		s.w.cover.fault(faultNotify+"-"+f.mode, nil)
		switch f.mode {
		case "refuse":
			return reply(req, http.StatusForbidden, "application/json", `{"error":{"code":"Forbidden"}}`), nil
		case "fail":
			return reply(req, http.StatusInternalServerError, "application/json", ""), nil
		default:
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	var st arm.OperationStatus
	_ = json.Unmarshal(body, &st)
	label := path.Base(req.URL.Path)
	owed := s.w.oracle.owed(label) // before s.mu: the oracle takes its own lock, then asks the sink
	s.mu.Lock()
	if len(s.delivered[label]) > 0 && owed {
		s.again[label]++
	}
	s.delivered[label] = append(s.delivered[label], st.Status)
	s.mu.Unlock()
	return reply(req, http.StatusOK, "application/json", ""), nil
}

// deliveries are the statuses delivered to label's URI.
func (s *sink) deliveries(label string) []arm.ProvisioningState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered[label]
}
