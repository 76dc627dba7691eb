package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hcpops/hcpops/core/armread"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/functions"
	dispatchoperations "github.com/hcpops/hcpops/functions/dispatchOperations"
	"github.com/hcpops/hcpops/handlers"
)

// nopEngine stands in for the lifecycle behind functions' interfaces so
// that only the handler layer is measured. It records what reached it, so
// the measurement can prove every document got through.
type nopEngine struct {
	docs atomic.Int64
}

func (n *nopEngine) DispatchDocuments(_ context.Context, docs []json.RawMessage) (lifecycle.DispatchResult, error) {
	n.docs.Add(int64(len(docs)))
	return lifecycle.DispatchResult{Documents: len(docs)}, nil
}

func (n *nopEngine) Tick(context.Context) (lifecycle.TickResult, error) {
	return lifecycle.TickResult{}, nil
}

func (n *nopEngine) Status(context.Context, armread.StatusRequest) (armread.OperationStatus, error) {
	return armread.OperationStatus{}, armread.ErrOperationNotFound
}

func (n *nopEngine) Result(context.Context, armread.StatusRequest) (armread.Result, error) {
	return armread.Result{}, armread.ErrOperationNotFound
}

func (n *nopEngine) Admit(_ context.Context, req armread.AdmitRequest) (string, error) {
	return req.HomeTenantID, nil
}

// handlerBody builds a host invocation carrying 100 real documents:
// 50 cluster creates, each an operation and its resource.
func handlerBody(ctx context.Context, dir string) ([]byte, int, error) {
	s, err := openStore(dir+"/handler.db", true)
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	if err := seedClusters(ctx, s, 50); err != nil {
		return nil, 0, err
	}
	items, _, err := readFeed(ctx, s, "")
	if err != nil {
		return nil, 0, err
	}
	body, err := envelope(items)
	return body, len(items), err
}

// measureHandler times one 100-document invocation in process and over
// loopback HTTP.
func measureHandler(ctx context.Context, dir string, iterations int) (*HandlerFigures, error) {
	body, docs, err := handlerBody(ctx, dir)
	if err != nil {
		return nil, err
	}
	eng := &nopEngine{}
	srv := handlers.New(handlers.Config{}, discardLogger())
	if err := functions.Register(srv, eng, functions.Config{}, discardLogger()); err != nil {
		return nil, fmt.Errorf("registering functions: %w", err)
	}
	fig := &HandlerFigures{Documents: docs, PayloadBytes: len(body), Iterations: iterations}

	// In process: no network, just the server's ServeHTTP.
	path := "/" + dispatchoperations.Name
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	for range iterations {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		w := &discardWriter{header: http.Header{}}
		srv.ServeHTTP(w, req)
		if w.status != 0 && w.status != http.StatusOK {
			return nil, fmt.Errorf("in-process invocation answered %d", w.status)
		}
	}
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&m1)
	fig.InProcessUS = us(elapsed) / float64(iterations)
	fig.AllocsPerInvoke = float64(m1.Mallocs-m0.Mallocs) / float64(iterations)
	fig.BytesPerInvoke = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(iterations)

	// Over loopback HTTP, as the host calls it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			fmt.Fprintln(os.Stderr, "bench: stopping the handler:", err)
		}
	}()
	url := "http://" + ln.Addr().String() + path
	client := &http.Client{Timeout: time.Minute}
	if err := invoke(ctx, client, url, body); err != nil { // open the connection
		return nil, err
	}
	lat := make([]time.Duration, 0, iterations)
	u0, err := readUsage()
	if err != nil {
		return nil, err
	}
	for range iterations {
		t := time.Now()
		if err := invoke(ctx, client, url, body); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	u1, err := readUsage()
	if err != nil {
		return nil, err
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	fig.HTTPMeanUS = us(sum) / float64(iterations)
	fig.HTTPP50US = us(percentile(lat, 0.5))
	fig.HTTPCPUUS = us(u1.cpu()-u0.cpu()) / float64(iterations)
	fig.Recorded = int(eng.docs.Load())
	if want := docs * (2*iterations + 1); fig.Recorded != want {
		return fig, fmt.Errorf("handler: the no-op engine received %d documents, want %d", fig.Recorded, want)
	}
	return fig, nil
}

// discardWriter is the cheapest ResponseWriter, so the in-process figure
// is the handler's cost and not a recorder's.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}
func (w *discardWriter) WriteHeader(status int) { w.status = status }

// percentile of durations, nearest rank; 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s)-1) + 0.5)
	return s[min(i, len(s)-1)]
}
