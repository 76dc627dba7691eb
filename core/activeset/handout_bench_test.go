package activeset

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// BenchmarkHandout is what an unchanged tick asks of the view per
// operation: its operation and its resource, decoded from their
// projections (documents as ARO-HCP writes them: document/testdata).
func BenchmarkHandout(b *testing.B) {
	const n = 1000
	opRaw, err := os.ReadFile("../document/testdata/operation.json")
	if err != nil {
		b.Fatal(err)
	}
	resRaw, err := os.ReadFile("../document/testdata/cluster.json")
	if err != nil {
		b.Fatal(err)
	}
	opRaw = bytes.Replace(opRaw, []byte(`"status": "Failed"`), []byte(`"status": "Provisioning"`), 1)
	r := newRig(&testing.T{})
	for i := range n {
		name := fmt.Sprintf("c%d", i)
		rid := "/subscriptions/" + sub + "/providers/Microsoft.RedHatOpenShift/hcpOperationStatuses/" +
			fmt.Sprintf("e2f8f733-dd90-49b0-8b2b-%012d", i)
		op := bytes.ReplaceAll(opRaw, []byte("e2f8f733-dd90-49b0-8b2b-f390b42aa339"), []byte(rid[len(rid)-36:]))
		op = bytes.ReplaceAll(op, []byte("6e7906b8-195a-5089-af7d-ff5988327ebe"), []byte(document.CosmosID(rid)))
		op = bytes.ReplaceAll(op, []byte("myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster"),
			[]byte("rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/"+name))
		res := bytes.ReplaceAll(resRaw, []byte("3db9af13-4eef-554c-864f-03a158aa3699"), []byte(document.CosmosID(clusterID(name))))
		res = bytes.ReplaceAll(res, []byte("myRG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/myCluster"),
			[]byte("rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/"+name))
		r.create(op)
		r.create(res)
	}
	st := r.build()
	if st.Operations != n || st.Resources != n {
		b.Fatalf("view holds %+v", st)
	}
	b.ReportAllocs()
	for b.Loop() {
		got := 0
		err := r.view.Operations(r.ctx, 100, func(ops []Op) error {
			refs := make([]store.DocRef, 0, len(ops))
			for _, o := range ops {
				if o.Err != nil {
					return o.Err
				}
				refs = append(refs, store.DocRef{PartitionKey: o.Doc.PartitionKey, ID: document.CosmosID(o.Doc.Properties.ExternalID)})
			}
			res, unknown, err := r.view.Resources(refs)
			for _, r := range res {
				if r.Doc != nil {
					got++
				}
			}
			if err == nil && len(unknown) > 0 {
				err = fmt.Errorf("%d resources unknown", len(unknown))
			}
			return err
		})
		if err != nil || got != n {
			b.Fatalf("handed out %d resources: %v", got, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/operation")
	b.ReportMetric(float64(st.Bytes)/n, "view-B/operation")
}
