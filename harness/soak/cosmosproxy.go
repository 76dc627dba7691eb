package soak

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/store/cosmos"
)

// cosmosProxy stands between every Cosmos client of the run (the soak's
// and the handler process's) and the local Cosmos test server. It records
// each write the server acknowledges to the Resources container, which is
// how the soak counts the writes of every document, and rewrites the
// account's regional endpoints so the SDK keeps talking through it. It
// serves plain HTTP on loopback, which the store accepts there, so the
// handler process needs no TLS override.
type cosmosProxy struct {
	upstream *url.URL
	client   *http.Client
	ledger   *writeLedger
	logger   *slog.Logger
	// stripIfMatch switches the store's ETag guard off (test-only): the
	// writers' If-Match never reaches the server.
	stripIfMatch bool

	// url is the clean door, for the soak's own clients; faultyURL the
	// one the handlers use, where faults (nil: none) are injected.
	url, faultyURL string
	faults         *cosmosFaults
	srvs           []*http.Server
}

// proxyDoor is one listener of the proxy.
type proxyDoor struct {
	p      *cosmosProxy
	url    string
	faults *cosmosFaults
}

func (d proxyDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.p.serve(w, r, d) }

// startCosmosProxy serves the proxy's two doors on free loopback ports
// until Close.
func startCosmosProxy(upstream string, ledger *writeLedger, stripIfMatch bool, faults *cosmosFaults, logger *slog.Logger) (*cosmosProxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("cosmos endpoint %q is not a URL with a host", upstream)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("cosmos endpoint %q: the soak only talks to a loopback test server", upstream)
	}
	p := &cosmosProxy{
		upstream: u,
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{
			Proxy:               nil,
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the loopback test server's self-signed certificate
			MaxIdleConnsPerHost: 128,
			// Below node's 5s keep-alive timeout: a connection the server
			// is closing is never reused for a write, which would fail
			// with a reset and leave the write's fate unknown.
			IdleConnTimeout: 2 * time.Second,
		}},
		ledger:       ledger,
		logger:       logger,
		stripIfMatch: stripIfMatch,
		faults:       faults,
	}
	for _, door := range []*string{&p.url, &p.faultyURL} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("cosmos proxy: %w", err)
		}
		*door = "http://" + ln.Addr().String() + "/"
		d := proxyDoor{p: p, url: *door}
		if door == &p.faultyURL {
			d.faults = faults
		}
		srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
		p.srvs = append(p.srvs, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("cosmos proxy stopped", "error", err)
			}
		}()
	}
	return p, nil
}

// Close stops serving and drops idle connections to the server.
func (p *cosmosProxy) Close() error {
	var errs []error
	for _, srv := range p.srvs {
		errs = append(errs, srv.Close())
	}
	p.client.CloseIdleConnections()
	return errors.Join(errs...)
}

// hopHeaders are per-connection; they are never forwarded.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length", "Accept-Encoding", "Content-Encoding"}

// docsRequest is a request on a container's documents.
type docsRequest struct {
	container string
	id        string // "" for the docs collection itself
}

func parseDocsPath(path string) (docsRequest, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 5 || parts[0] != "dbs" || parts[2] != "colls" || parts[4] != "docs" || len(parts) > 6 {
		return docsRequest{}, false
	}
	d := docsRequest{container: parts[3]}
	if len(parts) == 6 {
		d.id = parts[5]
	}
	return d, true
}

func (p *cosmosProxy) serve(w http.ResponseWriter, r *http.Request, door proxyDoor) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client is gone before it finished sending: nothing was written
	}
	docs, isDocs := parseDocsPath(r.URL.Path)
	recorded := isDocs && docs.container == cosmos.ResourcesContainer
	batch := strings.EqualFold(r.Header.Get("x-ms-cosmos-is-batch-request"), "true")
	if recorded {
		fault, wait := door.faults.draw(cosmosKind(r, docs, batch))
		if refuse(w, fault, wait) {
			return
		}
		if fault == faultSlow && !sleep(r.Context(), wait) {
			return // the client gave up: nothing is sent on
		}
	}
	ifMatch := r.Header.Get("If-Match")
	sent := body
	if p.stripIfMatch && recorded {
		if batch {
			sent = stripBatchIfMatch(body)
		}
	}
	// The write completes even if the client dies meanwhile (a killed
	// handler): the server applies it, so the ledger must see it.
	ctx := context.WithoutCancel(r.Context())
	out, err := http.NewRequestWithContext(ctx, r.Method, p.upstream.Scheme+"://"+p.upstream.Host+r.URL.RequestURI(), bytes.NewReader(sent))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	copyHeaders(out.Header, r.Header)
	if p.stripIfMatch && recorded {
		out.Header.Del("If-Match")
	}
	resp, err := p.client.Do(out)
	if err != nil {
		p.logger.WarnContext(ctx, "cosmos proxy: the test server did not answer", "method", r.Method, "path", r.URL.Path, "error", err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/":
		answer = rewriteAccount(answer, door.url)
	case recorded:
		p.record(r, docs, batch, body, ifMatch, resp.StatusCode, answer)
	}
	copyHeaders(w.Header(), resp.Header)
	w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
}

// rewriteAccount points the account's regional endpoints at the door the
// client came in by.
func rewriteAccount(raw []byte, door string) []byte {
	var account map[string]any
	if err := json.Unmarshal(raw, &account); err != nil {
		return raw
	}
	for _, field := range []string{"writableLocations", "readableLocations"} {
		locs, _ := account[field].([]any)
		for _, l := range locs {
			if loc, ok := l.(map[string]any); ok {
				loc["databaseAccountEndpoint"] = door
			}
		}
	}
	out, err := json.Marshal(account)
	if err != nil {
		return raw
	}
	return out
}

// batchOp is one step of a transactional batch as the SDK sends it, and
// batchResult one step of the server's answer.
type batchOp struct {
	OperationType string          `json:"operationType"`
	ID            string          `json:"id"`
	IfMatch       string          `json:"ifMatch"`
	ResourceBody  json.RawMessage `json:"resourceBody"`
}

type batchResult struct {
	StatusCode   int             `json:"statusCode"`
	ResourceBody json.RawMessage `json:"resourceBody"`
}

// record adds what the server acknowledged to the ledger.
func (p *cosmosProxy) record(r *http.Request, docs docsRequest, batch bool, reqBody []byte, ifMatch string, status int, answer []byte) {
	if status >= 300 {
		return // refused, or a failed batch the server rolled back (207)
	}
	pk := headerPartitionKey(r.Header.Get("x-ms-documentdb-partitionkey"))
	switch {
	case batch:
		var ops []batchOp
		var results []batchResult
		if json.Unmarshal(reqBody, &ops) != nil || json.Unmarshal(answer, &results) != nil || len(ops) != len(results) {
			p.logger.ErrorContext(r.Context(), "cosmos proxy: a batch it cannot read was acknowledged", "request", excerpt(reqBody), "answer", excerpt(answer))
			return
		}
		for i, op := range ops {
			kind, ok := map[string]writeKind{"Create": writeCreate, "Upsert": writeReplace, "Replace": writeReplace,
				"Patch": writeReplace, "Delete": writeDelete}[op.OperationType]
			if !ok || results[i].StatusCode >= 300 {
				continue
			}
			p.add(kind, pk, op.ID, results[i].ResourceBody, op.IfMatch)
		}
	case r.Method == http.MethodPost && docs.id == "" && !isQuery(r.Header):
		p.add(writeCreate, pk, "", answer, ifMatch)
	case (r.Method == http.MethodPut || r.Method == http.MethodPatch) && docs.id != "":
		p.add(writeReplace, pk, docs.id, answer, ifMatch)
	case r.Method == http.MethodDelete && docs.id != "":
		p.add(writeDelete, pk, docs.id, nil, ifMatch)
	}
}

func (p *cosmosProxy) add(kind writeKind, pk, id string, body []byte, ifMatch string) {
	w := write{kind: kind, ifMatch: ifMatch, doc: docVersion{key: docKey{pk: pk, id: id}}}
	if kind != writeDelete {
		d, err := readVersion(body)
		if err != nil {
			p.logger.Error("cosmos proxy: an acknowledged write has no readable body", "error", err, "body", excerpt(body))
			return
		}
		w.doc = d
	}
	p.ledger.add(w)
}

func isQuery(h http.Header) bool {
	return strings.EqualFold(h.Get("x-ms-documentdb-isquery"), "true") ||
		strings.HasPrefix(h.Get("Content-Type"), "application/query+json")
}

// headerPartitionKey reads x-ms-documentdb-partitionkey, a JSON array
// holding one string.
func headerPartitionKey(h string) string {
	var values []string
	if json.Unmarshal([]byte(h), &values) != nil || len(values) != 1 {
		return ""
	}
	return values[0]
}

// stripBatchIfMatch drops every step's ifMatch.
func stripBatchIfMatch(body []byte) []byte {
	var ops []map[string]json.RawMessage
	if json.Unmarshal(body, &ops) != nil {
		return body
	}
	for _, op := range ops {
		delete(op, "ifMatch")
	}
	out, err := json.Marshal(ops)
	if err != nil {
		return body
	}
	return out
}

func excerpt(b []byte) string {
	const limit = 300
	if len(b) > limit {
		return string(b[:limit]) + "..."
	}
	return string(b)
}
