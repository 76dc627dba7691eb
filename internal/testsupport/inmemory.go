package testsupport

import (
	"net/http"
	"net/http/httptest"
)

// InMemory carries requests to h without a socket: how a unit test
// reaches a fake service through the production client. Each request is
// served as a server on the other end of a socket would serve it, on a
// goroutine of its own, so one whose context ends first fails with that
// context's error, as net/http's does, while the handler sees the same
// context end.
func InMemory(h http.Handler) http.RoundTripper { return inMemory{h} }

type inMemory struct{ h http.Handler }

func (m inMemory) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close() // a RoundTripper closes it, as net/http's does
	}
	// The server's view of it: a body always (http.NoBody for none).
	sreq := req.Clone(req.Context())
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		m.h.ServeHTTP(rec, sreq)
	}()
	select {
	case <-served:
		return rec.Result(), nil
	case <-req.Context().Done():
		<-served // the handler saw the same context end
		return nil, req.Context().Err()
	}
}
