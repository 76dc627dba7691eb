package ocm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// A list is evidence only when it keeps its contract. CS pages a list by
// the size asked, says how many items a page has and how many match in
// all; a search by ids matches each id at most once. A page that breaks
// any of that is garbage, whatever its items say, and reading stops there:
// so the memory a list costs is bounded by what was asked, not by what a
// lying or broken CS sends.

// maxListItemBytes bounds the JSON of one listed object: a cluster with
// every field set is a few KB, so this is far above any real one.
const maxListItemBytes = 64 << 10

// listEnvelopeBytes is room for a page's own fields around its items.
const listEnvelopeBytes = 4 << 10

// defaultMaxPages bounds the pages of a list whose rules set no bound of
// their own; a search by ids ends sooner, when its ids are all seen.
const defaultMaxPages = 100

// listRules say what a list was asked for.
type listRules struct {
	call     string            // the request, for the error: method, path, search
	want     map[string]string // lower-cased ids asked for -> hrefs
	size     int               // the page size asked
	searched bool              // the list is a search for want's ids only
	maxPages int               // 0: defaultMaxPages
	// under is the collection's path, lower-cased, with a trailing
	// slash: an item whose href is not under+id is about another object
	// (a cache or proxy that served another cluster's list).
	under string
}

// listPage is one page as CS answered it.
type listPage[T any] struct {
	items             []T
	size, total       int
	hasSize, hasTotal bool
	// kind and hasPage are read only from pages the client reads itself
	// (listpage.go), which readPage holds to OCM's list shape.
	kind    string
	hasPage bool
}

// pageOf builds a listPage from an SDK list response's accessors.
func pageOf[T any](items []T, size, total func() (int, bool)) listPage[T] {
	p := listPage[T]{items: items}
	p.size, p.hasSize = size()
	p.total, p.hasTotal = total()
	return p
}

// readList pages through a list and returns the asked-for objects by
// lower-cased id. It stops once every asked id is seen. A page that breaks
// the contract makes the whole list an error wrapping
// cs.ErrInconsistentList that names the call, the page and what was wrong.
func readList[T any](ctx context.Context, r listRules, fetch func(ctx context.Context, page int) (listPage[T], error),
	idOf, hrefOf func(T) string, same func(a, b T) bool) (map[string]*T, error) {
	maxPages := r.maxPages
	if maxPages == 0 {
		maxPages = defaultMaxPages
	}
	// The items stay in their pages; the map points at them: a map
	// holding listed clusters by value, one per page, gave the collector
	// a copy of every page to scan (docs/decisions/batch-polling.md#a-lists-map).
	seen := make(map[string]*T, len(r.want))
	read, firstTotal := 0, -1
	for page := 1; page <= maxPages; page++ {
		garbage := func(format string, args ...any) error {
			return fmt.Errorf("%w: %s page %d: %s", cs.ErrInconsistentList, r.call, page, fmt.Sprintf(format, args...))
		}
		limit := int64(r.size)*maxListItemBytes + listEnvelopeBytes
		pctx, lim := withBodyLimit(ctx, limit)
		p, err := fetch(pctx, page)
		if lim.exceeded() {
			return nil, garbage("the page is larger than %d bytes, more than %d items can be", limit, r.size)
		}
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", page, err)
		}
		n := len(p.items)
		// The items first: what they say is the likeliest lie to name.
		for i := range p.items {
			it := &p.items[i]
			id := strings.ToLower(idOf(*it))
			if h := hrefOf(*it); h != "" && r.under != "" && strings.ToLower(h) != r.under+id {
				return nil, garbage("item %q is about another object (href %q)", quotable(idOf(*it)), quotable(h))
			}
			if _, asked := r.want[id]; !asked {
				if r.searched {
					return nil, garbage("item %q was not searched for", idOf(*it))
				}
				continue
			}
			if prev, twice := seen[id]; twice {
				if !same(*prev, *it) {
					return nil, garbage("item %q is listed twice with different content", idOf(*it))
				}
				continue
			}
			seen[id] = it
		}
		switch {
		case n > r.size:
			return nil, garbage("%d items, more than the size of %d asked", n, r.size)
		case p.hasSize && p.size != n:
			return nil, garbage("the page says size %d but has %d items", p.size, n)
		case r.searched && p.hasTotal && p.total > len(r.want):
			return nil, garbage("total %d, more than the %d ids searched can match", p.total, len(r.want))
		case p.hasTotal && firstTotal >= 0 && p.total != firstTotal:
			return nil, garbage("total %d, but page 1 said %d", p.total, firstTotal)
		}
		if p.hasTotal && firstTotal < 0 {
			firstTotal = p.total
		}
		read += n
		switch {
		case r.searched && read > len(r.want):
			return nil, garbage("%d items in all, more than the %d ids searched can fill", read, len(r.want))
		case len(seen) == len(r.want), n == 0, p.hasTotal && read >= p.total:
			return seen, nil
		}
	}
	return nil, fmt.Errorf("%w: %s: more than %d pages", cs.ErrInconsistentList, r.call, maxPages)
}

// bodyLimit caps the response bodies of the requests made with its
// context; the transport wrapper limitBodies applies it.
type bodyLimit struct {
	n   int64
	hit atomic.Bool
}

func (l *bodyLimit) exceeded() bool { return l.hit.Load() }

type bodyLimitKey struct{}

func withBodyLimit(ctx context.Context, n int64) (context.Context, *bodyLimit) {
	l := &bodyLimit{n: n}
	return context.WithValue(ctx, bodyLimitKey{}, l), l
}

var errBodyLimit = errors.New("response body over the limit of its request")

// limitBodies makes a response body fail once it passes the limit its
// request's context carries, so the SDK's decoder stops there instead of
// reading on.
func limitBodies(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if l, ok := req.Context().Value(bodyLimitKey{}).(*bodyLimit); ok && err == nil {
			resp.Body = &limitedBody{ReadCloser: resp.Body, left: l.n, limit: l}
		}
		return resp, err
	})
}

type limitedBody struct {
	io.ReadCloser
	left  int64
	limit *bodyLimit
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.limit.hit.Store(true)
		return 0, errBodyLimit
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
