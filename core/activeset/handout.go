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

// Resources answers refs from the view, got[i] for refs[i]: a live
// resource it holds (its projection, or why it does not parse), or, with
// neither, one known to be gone. unknown are the indexes of the refs it
// cannot answer (not needed by any operation it holds, or not read yet).
// A slice, not a map: a tick asks for every operation's resource, and
// hashing each ref twice cost it more than finding it.
func (v *View) Resources(refs []store.DocRef) (got []Res, unknown []int, err error) {
	type held struct {
		i   int
		rec []byte
	}
	var found []held
	var c *codec
	func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		s := v.set
		if s == nil {
			unknown = make([]int, len(refs))
			for i := range refs {
				unknown[i] = i
			}
			return
		}
		c = s.res
		now := v.cfg.Clock.Now().Unix()
		found = make([]held, 0, len(refs))
		for i, ref := range refs {
			e, ok := s.resource(ref)
			switch {
			case !ok || e.state == resUnknown:
				unknown = append(unknown, i)
			case e.state == resPresent:
				rec := s.rec(e.at)
				if m, _, err := header(rec); err == nil && m.expiredAt(now) {
					continue // expired since: gone
				}
				found = append(found, held{i, rec})
			}
		}
	}()
	got = make([]Res, len(refs))
	for _, f := range found {
		payload, flags, err := c.decode(nil, f.rec) // a buffer the resource keeps
		if err != nil {
			return nil, nil, err
		}
		r := &got[f.i]
		if flags&flagRaw != 0 {
			r.Doc, r.Err = document.ParseResource(payload)
		} else if r.Doc, r.Err = document.ResourceFromOwnedProjection(payload); r.Err != nil {
			return nil, nil, r.Err
		}
	}
	return got, unknown, nil
}
