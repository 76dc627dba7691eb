package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/frontend"
	"github.com/hcpops/hcpops/harness/store/memory"
)

// An operation document the tick cannot parse is listed by ops with its
// id, why and since when, in both listings, instead of vanishing: the
// tick skips it every time, and only ops leads a person to it.
func TestOpsListsAnUnreadableOperation(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	fe := frontend.New(mem, clock.Real{}, uuid.NewString)
	const sub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"
	res, err := fe.PutCluster(ctx, "/subscriptions/"+sub+"/resourceGroups/demo/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/broken", frontend.ClusterSpec{Location: "eastus", VersionID: "4.20"}, frontend.Options{Location: "eastus"})
	if err != nil {
		t.Fatal(err)
	}
	name, opID := res.Operation.Name(), res.Operation.ID
	item, err := mem.Get(ctx, sub, opID)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(item.Body, &raw); err != nil {
		t.Fatal(err)
	}
	raw["properties"].(map[string]any)["startTime"] = "not-a-time"
	body, _ := json.Marshal(raw)
	if _, err := mem.Replace(ctx, sub, opID, body, item.ETag); err != nil {
		t.Fatal(err)
	}
	cfg, err := lifecycle.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sub string
		active    bool
	}{{"every subscription's active", "", false}, {"one subscription", sub, false}, {"one subscription's active", sub, true}} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := listOps(ctx, mem, cfg, tc.sub, tc.active, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0].Unreadable == nil {
				t.Fatalf("rows = %+v, want the unreadable operation", rows)
			}
			r := rows[0]
			if r.OperationID != name || r.Unreadable.DocumentID != opID || !strings.Contains(r.Unreadable.Error, "startTime") ||
				r.Unreadable.Since.IsZero() || time.Since(r.Unreadable.Since) > time.Hour {
				t.Errorf("row = %+v %+v; want its name, document id, the field at fault and when it was written", r, *r.Unreadable)
			}
			var out bytes.Buffer
			if err := opsTable(&out, rows, tc.sub == "", false, time.Now()); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{name, "UNREADABLE Accepted", "unreadable since ", opID, "not-a-time"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the table lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}
