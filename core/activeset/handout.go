package activeset

import (
	"context"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// What the view hands a tick: its projections, decoded without parsing.

// Op is an operation as the view hands it out: parsed, or why it does
// not parse.
type Op struct {
	Doc *document.OperationDocument
	Err error
	Raw []byte // the document as read, when it does not parse
}

// Res is a resource as the view hands it out: its projection (Partial:
// read it whole before writing it), or why it does not parse.
type Res struct {
	Doc *document.Resource
	Err error
}

// Operations hands the held operations to page, size at a time (a
// partition's together), decoded from their projections without parsing.
// An operation past its expiry is forgotten instead. The view may change
// meanwhile: the pages are what it held when Operations began.
func (v *View) Operations(ctx context.Context, size int, page func([]Op) error) error {
	recs, codec, err := v.snapshot()
	if err != nil {
		return err
	}
	if size <= 0 {
		size = defaultPage
	}
	for start := 0; start < len(recs); start += size {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := recs[start:min(start+size, len(recs))]
		ops := make([]Op, 0, len(chunk))
		for _, rec := range chunk {
			payload, flags, err := codec.decode(nil, rec) // a buffer the operation keeps
			if err != nil {
				return err
			}
			var o Op
			if flags&flagRaw != 0 {
				o.Raw = payload
				o.Doc, o.Err = document.ParseOperation(o.Raw)
			} else if o.Doc, o.Err = document.OperationFromOwnedProjection(payload); o.Err != nil {
				return o.Err
			}
			ops = append(ops, o)
		}
		if err := page(ops); err != nil {
			return err
		}
	}
	return nil
}

// Resources answers refs from the view: got holds the live resources it
// has (projections, or why they do not parse), and unknown the refs it
// cannot answer (not needed by any operation it holds, or not read yet);
// a ref in neither is known to be gone.
func (v *View) Resources(refs []store.DocRef) (got map[store.DocRef]Res, unknown []store.DocRef, err error) {
	type held struct {
		ref store.DocRef
		rec []byte
	}
	var found []held
	var c *codec
	func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		s := v.set
		if s == nil {
			unknown = refs
			return
		}
		c = &s.res
		now := v.cfg.Clock.Now().Unix()
		for _, ref := range refs {
			e, ok := s.resource(ref)
			switch {
			case !ok || e.state == resUnknown:
				unknown = append(unknown, ref)
			case e.state == resPresent:
				rec := s.rec(e.at)
				if m, _, err := header(rec); err == nil && m.expiredAt(now) {
					continue // expired since: gone
				}
				found = append(found, held{ref, rec})
			}
		}
	}()
	got = make(map[store.DocRef]Res, len(found))
	for _, f := range found {
		payload, flags, err := c.decode(nil, f.rec) // a buffer the resource keeps
		if err != nil {
			return nil, nil, err
		}
		var r Res
		if flags&flagRaw != 0 {
			r.Doc, r.Err = document.ParseResource(payload)
		} else if r.Doc, r.Err = document.ResourceFromOwnedProjection(payload); r.Err != nil {
			return nil, nil, r.Err
		}
		got[f.ref] = r
	}
	return got, unknown, nil
}
