package dst

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/store"
)

// Mutations break one of the engine's rules on purpose, from outside it,
// so a test can show the oracle finds the broken rule within a few
// hundred seeds.
const (
	// MutantLone404: CS's 404 with no witness completes a delete after
	// three reads, however soon: the confirmation window dropped.
	MutantLone404 = "lone-404-is-absence"
	// MutantNoETag: the engine's replaces go through whatever the
	// document's etag now is: the ETag guard dropped.
	MutantNoETag = "no-etag-guard"
)

// noETag replaces whatever etag the document has now when the engine
// writes: a write made on a stale read lands over another's.
func (s *gatedStore) unguarded(ctx context.Context, pk, id string, ifMatch string) string {
	if s.w.opts.Mutation != MutantNoETag || actorOf(ctx) == actorFrontend {
		return ifMatch
	}
	cur, err := s.next.Get(ctx, pk, id)
	if err != nil {
		return ifMatch
	}
	return cur.ETag
}

func (s *gatedStore) unguardedBatch(ctx context.Context, pk string, ops []store.BatchOp) []store.BatchOp {
	if s.w.opts.Mutation != MutantNoETag || actorOf(ctx) == actorFrontend {
		return ops
	}
	out := append([]store.BatchOp(nil), ops...)
	for i, op := range out {
		if op.Kind == store.OpReplace {
			out[i].IfMatch = s.unguarded(ctx, pk, op.ID, op.IfMatch)
		}
	}
	return out
}

func checkMutation(m string) error {
	switch m {
	case "", MutantLone404, MutantNoETag:
		return nil
	}
	return fmt.Errorf("dst: no mutation %q", m)
}
