package storeapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// DefaultCallTimeout bounds one call whatever the caller's context says:
// the running process may hang, and a CLI must not hang with it.
const DefaultCallTimeout = 30 * time.Second

// maxLine bounds one NDJSON page of a stream.
const maxLine = 64 << 20

// Client is the store.Store of a running process, reached through its API.
type Client struct {
	url     string
	token   string
	http    *http.Client
	timeout time.Duration
}

var _ store.Store = (*Client)(nil)

// NewClient talks to the API at url with token.
func NewClient(url, token string) *Client {
	return &Client{url: url, token: token, http: &http.Client{}, timeout: DefaultCallTimeout}
}

// Prove asks the server to prove it knows the token, without sending the
// token, and returns its pid; it answers within timeout or fails.
func (c *Client) Prove(ctx context.Context, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b := make([]byte, minChallenge)
	if _, err := rand.Read(b); err != nil {
		return 0, fmt.Errorf("store API challenge: %w", err)
	}
	challenge := hex.EncodeToString(b)
	var resp response
	if err := c.send(ctx, pathHealth, request{Challenge: challenge}, &resp, false); err != nil {
		return 0, err
	}
	if !hmac.Equal([]byte(resp.Proof), []byte(proof(c.token, challenge))) {
		return 0, errors.New("its answer to a challenge is not the token's")
	}
	return resp.PID, nil
}

func (c *Client) Get(ctx context.Context, partitionKey, id string) (store.Item, error) {
	return c.itemCall(ctx, pathGet, request{PartitionKey: partitionKey, ID: id})
}

func (c *Client) ReadMany(ctx context.Context, refs []store.DocRef) (map[store.DocRef]store.Item, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req := request{Refs: make([]docItem, len(refs))}
	for i, r := range refs {
		req.Refs[i] = docItem{PartitionKey: r.PartitionKey, ID: r.ID}
	}
	var resp response
	if err := c.call(ctx, pathReadMany, req, &resp); err != nil {
		return nil, err
	}
	out := make(map[store.DocRef]store.Item, len(resp.Found))
	for _, f := range resp.Found {
		out[store.DocRef{PartitionKey: f.PartitionKey, ID: f.ID}] = store.Item{Body: f.Body, ETag: f.ETag}
	}
	return out, nil
}

func (c *Client) Create(ctx context.Context, partitionKey string, doc []byte) (store.Item, error) {
	return c.itemCall(ctx, pathCreate, request{PartitionKey: partitionKey, Body: doc})
}

func (c *Client) Replace(ctx context.Context, partitionKey, id string, doc []byte, ifMatch string) (store.Item, error) {
	return c.itemCall(ctx, pathReplace, request{PartitionKey: partitionKey, ID: id, Body: doc, IfMatch: ifMatch})
}

func (c *Client) SoftDelete(ctx context.Context, partitionKey, id string) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.call(ctx, pathSoftDelete, request{PartitionKey: partitionKey, ID: id}, &response{})
}

func (c *Client) Batch(ctx context.Context, partitionKey string, ops []store.BatchOp) ([]store.Item, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req := request{PartitionKey: partitionKey, Ops: make([]batchOp, len(ops))}
	for i, o := range ops {
		req.Ops[i] = batchOp{Kind: o.Kind, ID: o.ID, Body: o.Body, IfMatch: o.IfMatch}
	}
	var resp response
	if err := c.call(ctx, pathBatch, req, &resp); err != nil {
		return nil, err
	}
	return fromItems(resp.Items), nil
}

func (c *Client) ChangeFeed(ctx context.Context, continuation string, maxItems int) (store.FeedPage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var resp response
	if err := c.call(ctx, pathChangeFeed, request{Continuation: continuation, MaxItems: maxItems}, &resp); err != nil {
		return store.FeedPage{}, err
	}
	return store.FeedPage{Items: fromItems(resp.Items), Continuation: resp.Continuation}, nil
}

func (c *Client) ActiveOperations(ctx context.Context, q store.ActiveOperationsQuery, page func([]store.Item) error) error {
	return c.stream(ctx, pathActiveOperations, request{Active: &activeQuery{
		WithPendingNotification: q.WithPendingNotification, PageSize: q.PageSize}}, page)
}

func (c *Client) Children(ctx context.Context, partitionKey, parentResourceID string, page func([]store.Item) error) error {
	return c.stream(ctx, pathChildren, request{PartitionKey: partitionKey, Parent: parentResourceID}, page)
}

func (c *Client) Partition(ctx context.Context, partitionKey string, page func([]store.Item) error) error {
	return c.stream(ctx, pathPartition, request{PartitionKey: partitionKey}, page)
}

// Close has nothing to release: the store belongs to the running process.
func (c *Client) Close() error { return nil }

func (c *Client) itemCall(ctx context.Context, path string, req request) (store.Item, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var resp response
	if err := c.call(ctx, path, req, &resp); err != nil {
		return store.Item{}, err
	}
	if resp.Item == nil {
		return store.Item{}, fmt.Errorf("store API %s: answer without an item", path)
	}
	return store.Item{Body: resp.Item.Body, ETag: resp.Item.ETag}, nil
}

func (c *Client) post(ctx context.Context, path string, req request, withToken bool) (*http.Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("store API %s: encoding: %w", path, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("store API %s: %w", path, err)
	}
	if withToken {
		hreq.Header.Set("Authorization", "Bearer "+c.token)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("store API %s: %w", path, err)
	}
	return resp, nil
}

// call makes one request and decodes its answer; a non-2xx answer is the
// store's error, rebuilt.
func (c *Client) call(ctx context.Context, path string, req request, out *response) error {
	return c.send(ctx, path, req, out, true)
}

func (c *Client) send(ctx context.Context, path string, req request, out *response, withToken bool) error {
	resp, err := c.post(ctx, path, req, withToken)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxLine)).Decode(out); err != nil {
		return fmt.Errorf("store API %s: HTTP %d: decoding the answer: %w", path, resp.StatusCode, err)
	}
	if out.Error != nil {
		return out.Error.decode()
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("store API %s: HTTP %d", path, resp.StatusCode)
	}
	return nil
}

// stream hands each NDJSON page to page; the call timeout covers the
// whole stream, since a CLI reads small results.
func (c *Client) stream(ctx context.Context, path string, req request, page func([]store.Item) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.post(ctx, path, req, true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var out response
		if json.NewDecoder(io.LimitReader(resp.Body, maxLine)).Decode(&out) == nil && out.Error != nil {
			return out.Error.decode()
		}
		return fmt.Errorf("store API %s: HTTP %d", path, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		var out response
		if err := json.Unmarshal(sc.Bytes(), &out); err != nil {
			return fmt.Errorf("store API %s: decoding a page: %w", path, err)
		}
		if out.Error != nil {
			return out.Error.decode()
		}
		if out.Done {
			return nil
		}
		if err := page(fromItems(out.Items)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("store API %s: reading pages: %w", path, err)
	}
	return fmt.Errorf("store API %s: the stream ended before its last page", path)
}
