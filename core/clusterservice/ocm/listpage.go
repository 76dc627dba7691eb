package ocm

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	jsoniter "github.com/json-iterator/go"
	ocmerrors "github.com/openshift-online/ocm-sdk-go/errors"
	"github.com/openshift-online/ocm-sdk-go/helpers"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// The poll's batched cluster list, read from its body. The request is the
// SDK's (ClustersListRequest.SendContext's, through the same connection,
// so the same token, retries and observer); only the reading of the page
// differs: wire.go's reader when it understands the page, else the SDK's
// own reader, exactly as SendContext runs it.

// maxPageRoom bounds the room made for a page's items from what the page
// says of itself; readList refuses a page larger than was asked anyway.
const maxPageRoom = 1000

// getPage sends what the SDK's List().Search(search).Size(size).Page(page)
// sends to path, through the same connection, and returns the answer's
// status and body.
func (c *Client) getPage(ctx context.Context, path, search string, size, page int) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "", nil)
	if err != nil {
		return 0, nil, err
	}
	req.URL = &url.URL{Path: path, RawQuery: pageQuery(search, size, page)}
	resp, err := c.conn.RoundTrip(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	// Room for the page at once: io.ReadAll grows from 512 bytes, copying
	// the page at each doubling, which showed in the unchanged tick's
	// profile (docs/decisions/batch-polling.md#reading-a-list-page). A
	// Content-Length is trusted only up to what size items of a few kB
	// take.
	room := int64(size) * pageItemGuess
	if resp.ContentLength > 0 {
		room = min(resp.ContentLength+1, int64(size)*4*pageItemGuess)
	}
	buf := bytes.NewBuffer(make([]byte, 0, room+bytes.MinRead))
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), err
}

// pageQuery is url.Values{page, search, size}.Encode() (the SDK's query,
// its keys in order), written at once: Encode sorts its keys and builds
// the query of a search of a hundred ids in a growing buffer, on every
// page of every tick (docs/decisions/batch-polling.md#reading-a-list-page).
func pageQuery(search string, size, page int) string {
	return "page=" + strconv.Itoa(page) + "&search=" + url.QueryEscape(search) + "&size=" + strconv.Itoa(size)
}

// pageItemGuess is about what one listed object takes (the simulator's
// indented clusters: docs/decisions/batch-polling.md#reading-a-list-page).
const pageItemGuess = 1 << 10

// pageReaders are the two readers of one kind's list page.
type pageReaders[T any] struct {
	wire func(*wire) T                // one item, by wire.go's reader
	sdk  func(*jsoniter.Iterator) []T // the items, by the SDK's
}

// readPage reads a page as the SDK's SendContext would, and maps its
// errors as csError does.
func readPage[T any](status int, body []byte, r pageReaders[T]) (listPage[T], error) {
	switch {
	case len(body) == 0 && status >= 400:
		return listPage[T]{}, csError(nil, status)
	case status >= 400:
		e, err := ocmerrors.UnmarshalErrorStatus(body, status)
		if err != nil {
			return listPage[T]{}, err
		}
		return listPage[T]{}, csError(e, status)
	}
	notList := func() error {
		return fmt.Errorf("%w: %w", cs.ErrInconsistentList, &cs.UnrecognizedAnswer{Method: http.MethodGet,
			Status: status, Bytes: len(body), Shape: "a list without OCM's list kind, page, size or total"})
	}
	if len(body) == 0 {
		return listPage[T]{}, notList()
	}
	p, ok := wirePage(body, r.wire)
	if !ok {
		var err error
		if p, err = sdkPage(body, r.sdk); err != nil {
			return p, err
		}
	}
	// A page is CS's word only in OCM's list shape: without it, a
	// gateway's or a cache's body with items would read as a list.
	if !strings.HasSuffix(p.kind, "List") || !p.hasPage || !p.hasSize || !p.hasTotal {
		return listPage[T]{}, notList()
	}
	return p, nil
}

// sdkPage is the SDK's reading of a list page (its
// read<Kind>ListResponse), with items read by items.
func sdkPage[T any](body []byte, items func(*jsoniter.Iterator) []T) (listPage[T], error) {
	var p listPage[T]
	it, err := helpers.NewIterator(body)
	if err != nil {
		return p, err
	}
	for {
		field := it.ReadObject()
		if field == "" {
			break
		}
		switch field {
		case "kind":
			p.kind = it.ReadString()
		case "page":
			it.ReadInt()
			p.hasPage = true
		case "size":
			p.size, p.hasSize = it.ReadInt(), true
		case "total":
			p.total, p.hasTotal = it.ReadInt(), true
		case "items":
			p.items = items(it)
		default:
			it.ReadAny()
		}
	}
	if it.Error != nil {
		return listPage[T]{}, fmt.Errorf("reading a list page: %w", it.Error)
	}
	return p, nil
}

// wirePage reads a list page with wire.go's reader, items by item: false
// when the page holds anything that reader leaves to the SDK's.
func wirePage[T any](body []byte, item func(*wire) T) (listPage[T], bool) {
	var p listPage[T]
	w := newWire(body)
	w.object(func(name string) bool {
		switch name {
		case "kind":
			p.kind = w.str()
		case "page":
			w.count()
			p.hasPage = true
		case "size":
			p.size, p.hasSize = w.count(), true
		case "total":
			p.total, p.hasTotal = w.count(), true
		case "items":
			// CS sends size before items: room for them at once, up to
			// what a page of ours holds.
			p.items = make([]T, 0, min(max(p.size, 0), maxPageRoom))
			w.array(func() { p.items = append(p.items, item(w)) })
		default:
			w.skip()
			return false
		}
		return true
	})
	if !w.end() {
		return listPage[T]{}, false
	}
	return p, true
}

// keep reads member name into the string paired with it in pairs (name,
// *string, name, *string, ...), or skips it when no pair names it; it
// says which.
func keep(w *wire, name string, pairs ...any) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i].(string) == name {
			*pairs[i+1].(*string) = w.str()
			return true
		}
	}
	w.skip()
	return false
}

// wireVersion reads a version object as cs.RawVersion makes it of the
// SDK's.
func wireVersion(w *wire) string {
	var id, raw, channel string
	w.object(func(name string) bool {
		return keep(w, name, "id", &id, "raw_id", &raw, "channel_group", &channel)
	})
	return cs.RawVersion(id, raw, channel)
}
