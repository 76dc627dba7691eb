package invoke

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// InMemory carries requests to h without a socket: how a unit test
// reaches a fake service through the production client. Each request is
// served as a server on the other end of a socket would serve it: on a
// goroutine of its own, the answer's status and headers reaching the
// client once the handler writes them (or returns), its body as the
// handler writes it (a flush is a no-op: nothing is buffered). A request
// whose context has ended is never served; one whose context ends before
// the headers fails with that context's error, and one that ends later
// cuts the body off with it, as net/http's do; the handler sees the same
// context end.
func InMemory(h http.Handler) http.RoundTripper { return inMemory{h} }

type inMemory struct{ h http.Handler }

func (m inMemory) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// net/http's Transport never sends a request whose context has ended;
	// served anyway, h would act on it (a fake CS would create the
	// cluster) while the caller saw only the context's error.
	if err := ctx.Err(); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	// The server's view of it: a body always (http.NoBody for none), and a
	// context that also ends once the client is done with the answer, as
	// a server's ends when its connection closes.
	sctx, hangUp := context.WithCancel(ctx)
	body := req.Body // the caller may set req.Body again once RoundTrip returns
	sreq := req.Clone(sctx)
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, req: req, sent: make(chan *http.Response, 1)}
	served := make(chan struct{})
	go func() {
		defer close(served)
		defer hangUp()
		defer func() {
			w.WriteHeader(http.StatusOK) // a handler that wrote nothing answered 200
			_ = pw.Close()
			if body != nil {
				_ = body.Close() // a RoundTripper closes it, as net/http's does
			}
		}()
		m.h.ServeHTTP(w, sreq)
	}()
	select {
	case resp := <-w.sent:
		stop := make(chan struct{})
		go func() { // the body ends with the request's context, as a socket's does
			select {
			case <-ctx.Done():
				_ = pr.CloseWithError(ctx.Err())
			case <-served:
			case <-stop:
			}
		}()
		resp.Body = &closeOnce{ReadCloser: pr, stop: stop, hangUp: hangUp}
		return resp, nil
	case <-ctx.Done():
		_ = pr.CloseWithError(ctx.Err())
		<-served // the handler saw the same context end
		return nil, ctx.Err()
	}
}

// pipeWriter is the handler's ResponseWriter: WriteHeader hands the
// response to the client, Write feeds its body.
type pipeWriter struct {
	header http.Header
	body   *io.PipeWriter
	req    *http.Request
	once   sync.Once
	sent   chan *http.Response
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.sent <- &http.Response{Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1,
			ProtoMinor: 1, Header: w.header.Clone(), ContentLength: -1, Request: w.req}
	})
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush has nothing to push: every Write reaches the reader as it is made.
func (w *pipeWriter) Flush() {}

// closeOnce is the answer's body: closing it stops the context watch and
// hangs up on the handler.
type closeOnce struct {
	io.ReadCloser
	once   sync.Once
	stop   chan struct{}
	hangUp context.CancelFunc
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { close(c.stop); c.hangUp() })
	return c.ReadCloser.Close()
}
