package dst

import (
	"context"
	"errors"
	"fmt"

	cs "github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/store"
)

// Mutations break one of the engine's rules on purpose, from outside it,
// so a test can show the oracle finds the broken rule within a few
// hundred seeds.
const (
	// MutantAny404: any 404 is taken for CS's own, a gateway's and an
	// empty body's too: the client's evidence rule dropped.
	MutantAny404 = "any-404-is-absence"
	// MutantNoETag: the engine's replaces go through whatever the
	// document's etag now is: the ETag guard dropped.
	MutantNoETag = "no-etag-guard"
)

// any404 is a CS client that reports every 404 as CS's own.
type any404 struct{ cs.Client }

func lie404(err error) error {
	var u *cs.UnrecognizedAnswer
	if errors.As(err, &u) && u.Status == 404 {
		return &cs.CallError{Call: "mutant", Err: &cs.Error{Status: 404, Code: "CLUSTERS-MGMT-404", Reason: "mutant: " + u.Error()}}
	}
	return err
}

func (c any404) GetCluster(ctx context.Context, href string) (cs.Cluster, error) {
	v, err := c.Client.GetCluster(ctx, href)
	return v, lie404(err)
}

func (c any404) GetClusterStatus(ctx context.Context, href string) (cs.ClusterStatus, error) {
	v, err := c.Client.GetClusterStatus(ctx, href)
	return v, lie404(err)
}

func (c any404) GetNodePool(ctx context.Context, href string) (cs.NodePool, error) {
	v, err := c.Client.GetNodePool(ctx, href)
	return v, lie404(err)
}

func (c any404) GetNodePoolStatus(ctx context.Context, href string) (cs.NodePoolStatus, error) {
	v, err := c.Client.GetNodePoolStatus(ctx, href)
	return v, lie404(err)
}

func (c any404) GetExternalAuth(ctx context.Context, href string) (cs.ExternalAuth, error) {
	v, err := c.Client.GetExternalAuth(ctx, href)
	return v, lie404(err)
}

func (c any404) DeleteCluster(ctx context.Context, href string) error {
	return lie404(c.Client.DeleteCluster(ctx, href))
}

func (c any404) DeleteNodePool(ctx context.Context, href string) error {
	return lie404(c.Client.DeleteNodePool(ctx, href))
}

func (c any404) DeleteExternalAuth(ctx context.Context, href string) error {
	return lie404(c.Client.DeleteExternalAuth(ctx, href))
}

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
	case "", MutantAny404, MutantNoETag:
		return nil
	}
	return fmt.Errorf("dst: no mutation %q", m)
}
