package storeapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// maxRequestBytes bounds a request body; a batch of ARO-HCP documents is
// far below it.
const maxRequestBytes = 32 << 20

// serverCallTimeout bounds the store work of one call and writeTimeout the
// whole answer: a stalled or vanished CLI costs the running process only
// its own call.
const (
	serverCallTimeout = time.Minute
	writeTimeout      = 2 * time.Minute
)

// Server serves one store on loopback to holders of its token.
type Server struct {
	store  store.Store
	token  string
	logger *slog.Logger
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}
}

// Listen starts serving s on 127.0.0.1 (a free port); Close stops it.
func Listen(s store.Store, token string, logger *slog.Logger) (*Server, error) {
	if token == "" {
		return nil, errors.New("store API: empty token")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("store API: listening on loopback: %w", err)
	}
	sv := &Server{store: s, token: token, logger: logger, ln: ln, done: make(chan struct{})}
	sv.srv = &http.Server{Handler: sv.routes(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: writeTimeout}
	go func() {
		defer close(sv.done)
		if err := sv.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("store API stopped", "error", err)
		}
	}()
	return sv, nil
}

// URL is where the API answers.
func (sv *Server) URL() string { return "http://" + sv.ln.Addr().String() }

// Close stops serving, giving calls in flight a few seconds.
func (sv *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := sv.srv.Shutdown(ctx)
	if err != nil {
		err = sv.srv.Close()
	}
	<-sv.done
	return err
}

func (sv *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+pathHealth, sv.health)
	call := func(path string, fn func(context.Context, request) (response, error)) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			req, ok := sv.decode(w, r)
			if !ok {
				return
			}
			resp, err := fn(r.Context(), req)
			if err != nil {
				we, status := encodeError(err)
				writeJSON(w, status, response{Error: we})
				return
			}
			writeJSON(w, http.StatusOK, resp)
		})
	}
	call(pathGet, sv.get)
	call(pathReadMany, sv.readMany)
	call(pathCreate, sv.create)
	call(pathReplace, sv.replace)
	call(pathSoftDelete, sv.softDelete)
	call(pathBatch, sv.batch)
	call(pathChangeFeed, sv.changeFeed)
	mux.HandleFunc("POST "+pathActiveOperations, sv.stream(func(ctx context.Context, req request, page func([]store.Item) error) error {
		q := store.ActiveOperationsQuery{}
		if req.Active != nil {
			q = store.ActiveOperationsQuery{WithPendingNotification: req.Active.WithPendingNotification, PageSize: req.Active.PageSize}
		}
		return sv.store.ActiveOperations(ctx, q, page)
	}))
	mux.HandleFunc("POST "+pathChildren, sv.stream(func(ctx context.Context, req request, page func([]store.Item) error) error {
		return sv.store.Children(ctx, req.PartitionKey, req.Parent, page)
	}))
	mux.HandleFunc("POST "+pathPartition, sv.stream(func(ctx context.Context, req request, page func([]store.Item) error) error {
		return sv.store.Partition(ctx, req.PartitionKey, page)
	}))
	return sv.authorized(mux)
}

// health answers a challenge with the proof that this server holds the
// advert's token. It is the one call without the token: a CLI sends the
// token only to a server that proved it has it already.
func (sv *Server) health(w http.ResponseWriter, r *http.Request) {
	req, ok := sv.decode(w, r)
	if !ok {
		return
	}
	if n := len(req.Challenge); n < minChallenge || n > maxChallenge {
		writeJSON(w, http.StatusBadRequest, response{Error: &wireError{Sentinel: "invalid",
			Message: fmt.Sprintf("store API: challenge is %d bytes, want %d to %d", n, minChallenge, maxChallenge)}})
		return
	}
	writeJSON(w, http.StatusOK, response{PID: os.Getpid(), Proof: proof(sv.token, req.Challenge)})
}

// authorized lets through only callers that read the token from the
// advert, which only the data dir's owner can read; the health challenge
// needs no token.
func (sv *Server) authorized(next http.Handler) http.Handler {
	want := []byte("Bearer " + sv.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != pathHealth && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeJSON(w, http.StatusUnauthorized, response{Error: &wireError{Message: "store API: missing or wrong token"}})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), serverCallTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (sv *Server) decode(w http.ResponseWriter, r *http.Request) (request, bool) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, response{Error: &wireError{
			Message: "store API: decoding request: " + err.Error(), Sentinel: "invalid"}})
		return req, false
	}
	if err := req.bounds(); err != nil {
		writeJSON(w, http.StatusBadRequest, response{Error: &wireError{Message: "store API: " + err.Error(), Sentinel: "invalid"}})
		return req, false
	}
	return req, true
}

// maxContinuation bounds a change-feed continuation: the embedded store's
// is a number, Cosmos DB's a short token.
const maxContinuation = 4096

// bounds refuses a request whose fields ask for more work than any store
// would do, naming the field: a page size is an allocation, a count of
// refs or steps a loop. The stores check the same (and more); checking
// here answers before a stream's first line, with a 400.
func (req request) bounds() error {
	var errs []error
	if req.Active != nil {
		errs = append(errs, store.CheckPageSize("page size (active.pageSize)", req.Active.PageSize))
	}
	errs = append(errs, store.CheckPageSize("page size (maxItems)", req.MaxItems))
	if n := len(req.Refs); n > store.MaxReadMany {
		errs = append(errs, fmt.Errorf("%w: refs has %d documents, more than %d", store.ErrInvalid, n, store.MaxReadMany))
	}
	if n := len(req.Ops); n > store.MaxBatchOps {
		errs = append(errs, fmt.Errorf("%w: ops has %d steps, more than %d", store.ErrInvalid, n, store.MaxBatchOps))
	}
	if n := len(req.Continuation); n > maxContinuation {
		errs = append(errs, fmt.Errorf("%w: continuation is %d bytes, more than %d", store.ErrInvalid, n, maxContinuation))
	}
	return errors.Join(errs...)
}

func (sv *Server) get(ctx context.Context, req request) (response, error) {
	it, err := sv.store.Get(ctx, req.PartitionKey, req.ID)
	return response{Item: &item{Body: it.Body, ETag: it.ETag}}, err
}

func (sv *Server) readMany(ctx context.Context, req request) (response, error) {
	refs := make([]store.DocRef, len(req.Refs))
	for i, r := range req.Refs {
		refs[i] = store.DocRef{PartitionKey: r.PartitionKey, ID: r.ID}
	}
	got, err := sv.store.ReadMany(ctx, refs)
	resp := response{Found: make([]docItem, 0, len(got))}
	for r, it := range got {
		resp.Found = append(resp.Found, docItem{PartitionKey: r.PartitionKey, ID: r.ID, Body: it.Body, ETag: it.ETag})
	}
	return resp, err
}

func (sv *Server) create(ctx context.Context, req request) (response, error) {
	it, err := sv.store.Create(ctx, req.PartitionKey, req.Body)
	return response{Item: &item{Body: it.Body, ETag: it.ETag}}, err
}

func (sv *Server) replace(ctx context.Context, req request) (response, error) {
	it, err := sv.store.Replace(ctx, req.PartitionKey, req.ID, req.Body, req.IfMatch)
	return response{Item: &item{Body: it.Body, ETag: it.ETag}}, err
}

func (sv *Server) softDelete(ctx context.Context, req request) (response, error) {
	return response{}, sv.store.SoftDelete(ctx, req.PartitionKey, req.ID)
}

func (sv *Server) batch(ctx context.Context, req request) (response, error) {
	ops := make([]store.BatchOp, len(req.Ops))
	for i, o := range req.Ops {
		ops[i] = store.BatchOp{Kind: o.Kind, ID: o.ID, Body: o.Body, IfMatch: o.IfMatch}
	}
	items, err := sv.store.Batch(ctx, req.PartitionKey, ops)
	return response{Items: toItems(items)}, err
}

func (sv *Server) changeFeed(ctx context.Context, req request) (response, error) {
	page, err := sv.store.ChangeFeed(ctx, req.Continuation, req.MaxItems)
	return response{Items: toItems(page.Items), Continuation: page.Continuation}, err
}

// stream writes one NDJSON line per page, then an error line if the
// store failed after the first page; a client that goes away ends the
// store's iteration through the failed write.
func (sv *Server) stream(fn func(context.Context, request, func([]store.Item) error) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, ok := sv.decode(w, r)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		flusher, _ := w.(http.Flusher)
		err := fn(r.Context(), req, func(items []store.Item) error {
			if err := enc.Encode(response{Items: toItems(items)}); err != nil {
				return fmt.Errorf("store API: writing a page: %w", err)
			}
			if flusher != nil {
				flusher.Flush()
			}
			return nil
		})
		if err != nil {
			we, _ := encodeError(err)
			_ = enc.Encode(response{Error: we})
			return
		}
		_ = enc.Encode(response{Done: true})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
