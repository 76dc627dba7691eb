package ocm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

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
		p, err := fetch(ctx, page)
		if errors.Is(err, errBodyLimit) {
			return nil, garbage("the page is larger than %d bytes, more than %d items can be", pageBytes(r.size), r.size)
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

// errBodyLimit is the read error of a list page larger than its request
// allows; the readers above tell it from the rest with errors.Is (the
// SDK's decoder hands its reader's error back as it is).
var errBodyLimit = errors.New("response body over the limit of its request")

// pageBytes is what a page of size items can take: the most an item may
// take each, and the page's own fields.
func pageBytes(size int) int64 { return int64(size)*maxListItemBytes + listEnvelopeBytes }

// listCollections are the last path segments of the lists hcpops reads.
var listCollections = map[string]bool{"clusters": true, "node_pools": true, "external_auths": true,
	"break_glass_credentials": true, "versions": true, "control_plane_upgrade_policies": true, "upgrade_policies": true,
	"inflight_checks": true}

// limitBodies makes the body of a list page fail once it passes what the
// page size its request asked (CS's default when it asks none) can take,
// so the decoder stops there instead of reading on. The bound is the
// request's own: nothing else carries it.
func limitBodies(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if n, ok := pageLimit(req); ok && err == nil {
			resp.Body = &limitedBody{ReadCloser: resp.Body, left: n}
		}
		return resp, err
	})
}

// pageLimit is the body limit of req when it reads a list page.
func pageLimit(req *http.Request) (int64, bool) {
	path := req.URL.Path
	if req.Method != http.MethodGet || !listCollections[path[strings.LastIndexByte(path, '/')+1:]] {
		return 0, false
	}
	size := listPageSize
	for q := req.URL.RawQuery; q != ""; { // no url.Values: a tick sends a list of ids each page
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if v, ok := strings.CutPrefix(kv, "size="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				size = n
			}
		}
	}
	return pageBytes(size), true
}

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBodyLimit
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
