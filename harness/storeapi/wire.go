// Package storeapi shares a process's embedded store with the CLI. bbolt
// lets one process hold the file, so `hcpopsctl dev` and `hcpops serve` serve
// the store.Store contract on loopback and advertise where in the data dir;
// `hcpopsctl submit|status|doc` find the advert and use the running process's
// store through it, so their writes reach its change feed at once.
package storeapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/hcpops/hcpops/core/store"
)

// Paths of the API; every request is a POST of a JSON request body, every
// answer JSON (or NDJSON pages for the streaming calls).
const (
	pathHealth           = "/v1/health"
	pathGet              = "/v1/get"
	pathCreate           = "/v1/create"
	pathReplace          = "/v1/replace"
	pathSoftDelete       = "/v1/softDelete"
	pathBatch            = "/v1/batch"
	pathActiveOperations = "/v1/activeOperations"
	pathChildren         = "/v1/children"
	pathPartition        = "/v1/partition"
	pathChangeFeed       = "/v1/changeFeed"
	pathReadMany         = "/v1/readMany"
)

// request carries the arguments of every call; each uses a subset.
// Bodies travel as base64 ([]byte) so the caller's bytes arrive unchanged.
type request struct {
	PartitionKey string       `json:"partitionKey,omitempty"`
	ID           string       `json:"id,omitempty"`
	Body         []byte       `json:"body,omitempty"`
	IfMatch      string       `json:"ifMatch,omitempty"`
	Ops          []batchOp    `json:"ops,omitempty"`
	Active       *activeQuery `json:"active,omitempty"`
	Parent       string       `json:"parent,omitempty"`
	Continuation string       `json:"continuation,omitempty"`
	MaxItems     int          `json:"maxItems,omitempty"`
	Refs         []docItem    `json:"refs,omitempty"`
	// Challenge is the health call's nonce, which the server answers
	// with Proof.
	Challenge string `json:"challenge,omitempty"`
}

// docItem is a document named by partition and id, with its body and etag
// when it was found (ReadMany).
type docItem struct {
	PartitionKey string `json:"partitionKey"`
	ID           string `json:"id"`
	Body         []byte `json:"body,omitempty"`
	ETag         string `json:"etag,omitempty"`
}

type activeQuery struct {
	WithPendingNotification bool `json:"withPendingNotification"`
	PageSize                int  `json:"pageSize"`
}

type batchOp struct {
	Kind    store.OpKind `json:"kind"`
	ID      string       `json:"id,omitempty"`
	Body    []byte       `json:"body,omitempty"`
	IfMatch string       `json:"ifMatch,omitempty"`
}

type item struct {
	Body []byte `json:"body"`
	ETag string `json:"etag"`
}

// response is one answer, or one page of a stream.
type response struct {
	Item         *item      `json:"item,omitempty"`
	Items        []item     `json:"items,omitempty"`
	Found        []docItem  `json:"found,omitempty"`
	Continuation string     `json:"continuation,omitempty"`
	Error        *wireError `json:"error,omitempty"`
	PID          int        `json:"pid,omitempty"`
	Proof        string     `json:"proof,omitempty"`
	// Done ends a stream, so a cut connection is not taken for its end.
	Done bool `json:"done,omitempty"`
}

// wireError keeps what callers test with errors.Is / errors.As: the
// store's sentinel (by name) and a batch step.
type wireError struct {
	Message  string       `json:"message"`
	Sentinel string       `json:"sentinel,omitempty"`
	Batch    *batchDetail `json:"batch,omitempty"`
}

type batchDetail struct {
	Index int          `json:"index"`
	Op    store.OpKind `json:"op"`
	ID    string       `json:"id"`
	// Message is the failed step's own error.
	Message string `json:"message,omitempty"`
}

var sentinels = []struct {
	name   string
	err    error
	status int
}{
	{"feed_gap", store.ErrFeedGap, http.StatusGone}, // before invalid: a refused continuation is both
	{"not_found", store.ErrNotFound, http.StatusNotFound},
	{"conflict", store.ErrConflict, http.StatusConflict},
	{"precondition_failed", store.ErrPreconditionFailed, http.StatusPreconditionFailed},
	{"invalid", store.ErrInvalid, http.StatusBadRequest},
}

// proof is the answer to a health challenge: only a holder of the token
// computes it, and it gives the token away to nobody.
func proof(token, challenge string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("hcpops store API proof\x00" + challenge))
	return hex.EncodeToString(m.Sum(nil))
}

// Bounds of a challenge: long enough not to repeat, short enough to bound
// an unauthenticated call.
const (
	minChallenge = 32
	maxChallenge = 256
)

func toItems(in []store.Item) []item {
	out := make([]item, len(in))
	for i, it := range in {
		out[i] = item{Body: it.Body, ETag: it.ETag}
	}
	return out
}

func fromItems(in []item) []store.Item {
	out := make([]store.Item, len(in))
	for i, it := range in {
		out[i] = store.Item{Body: it.Body, ETag: it.ETag}
	}
	return out
}

// encodeError turns a store error into its wire form and HTTP status.
func encodeError(err error) (*wireError, int) {
	we := &wireError{Message: err.Error()}
	status := http.StatusInternalServerError
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			we.Sentinel, status = s.name, s.status
			break
		}
	}
	var be *store.BatchError
	if errors.As(err, &be) {
		we.Batch = &batchDetail{Index: be.Index, Op: be.Op, ID: be.ID}
		if be.Err != nil {
			we.Batch.Message = be.Err.Error()
		}
	}
	return we, status
}

// decode rebuilds an error that errors.Is and errors.As treat like the
// one the running process's store returned.
func (we *wireError) decode() error {
	err := errors.New(we.Message)
	for _, s := range sentinels {
		if s.name == we.Sentinel {
			err = &remoteError{msg: we.Message, sentinel: s.err}
		}
	}
	if we.Batch != nil {
		inner := err
		if we.Sentinel != "" {
			inner = sentinelNamed(we.Sentinel)
			if we.Batch.Message != "" {
				inner = &remoteError{msg: we.Batch.Message, sentinel: inner}
			}
		}
		return &store.BatchError{Index: we.Batch.Index, Op: we.Batch.Op, ID: we.Batch.ID, Err: inner}
	}
	return err
}

func sentinelNamed(name string) error {
	for _, s := range sentinels {
		if s.name == name {
			return s.err
		}
	}
	return errors.New(name)
}

// remoteError is the running process's error as it said it (which already
// names the sentinel), still matching the sentinel for errors.Is.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }
