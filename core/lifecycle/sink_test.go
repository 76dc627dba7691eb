package lifecycle

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
)

// sink is an ARM notification endpoint on 127.0.0.1 that can be told to
// fail its next calls.
type sink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	fail int
	log  []sinkCall
}

type sinkCall struct {
	path   string
	status int
	body   arm.OperationStatus
}

func newSink(t testing.TB) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body arm.OperationStatus
		_ = json.Unmarshal(data, &body)
		s.mu.Lock()
		status := http.StatusOK
		if s.fail > 0 {
			s.fail--
			status = http.StatusServiceUnavailable
		}
		s.log = append(s.log, sinkCall{path: r.URL.Path, status: status, body: body})
		s.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) uri(name string) string { return s.srv.URL + "/notify/" + name }

func (s *sink) failNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = n
}

// calls returns the calls made for operation name.
func (s *sink) calls(name string) []sinkCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sinkCall
	for _, c := range s.log {
		if c.path == "/notify/"+name {
			out = append(out, c)
		}
	}
	return out
}
