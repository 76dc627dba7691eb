package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
)

// submitStuck submits a cluster create and returns its operation id.
func submitStuck(t *testing.T, w *workspace, name, notify string, extra ...string) string {
	t.Helper()
	args := append([]string{"submit", "-resource", cliCluster(name)}, extra...)
	if notify != "" {
		args = append(args, "-notification-uri", notify)
	}
	r := w.hcpops(t, "", args...)
	m := regexp.MustCompile(`(?m)^operation (\S+)$`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("submit %s: %s%s", name, r.stdout, r.stderr)
	}
	return m[1]
}

func opStatus(t *testing.T, w *workspace, op string) string {
	t.Helper()
	r := w.hcpops(t, "", "status", op, "-subscription", cliSub)
	m := regexp.MustCompile(`"status": "(\w+)"`).FindStringSubmatch(r.stdout)
	if m == nil {
		return ""
	}
	return m[1]
}

// logged reports whether dev.log holds a record msg about op for which
// match holds.
func logged(t *testing.T, w *workspace, op, msg string, match func(devlog.Record) bool) bool {
	t.Helper()
	found := false
	if err := devlog.Scan(w.dir+"/.data", func(r devlog.Record) {
		found = found || r.OperationID == op && r.Msg == msg && match(r)
	}, op, msg); err != nil {
		t.Fatal(err)
	}
	return found
}

// hcpopsctl ops fail beside a running dev: refused without a reason, then
// the operation is Failed with the operator's reason, the cluster Failed,
// ARM told by dev's tick, the record in dev.log; a second fail is refused.
func TestOpsFailBesideDev(t *testing.T) {
	w := newWorkspace(t)
	d := w.startDev(t)
	req, _ := http.NewRequest(http.MethodPut, d.sim+"/_sim/faults", strings.NewReader(`{"error_rate":1,"error_status":503}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("faults: %v %v", err, resp)
	}
	resp.Body.Close()
	op := submitStuck(t, w, "lost", d.sink+"/lost")
	if msg := oneLine(t, w.hcpops(t, "", "ops", "fail", op, "-subscription", cliSub), "ops"); !strings.Contains(msg, "-reason is required") {
		t.Errorf("ops fail without -reason: %q", msg)
	}
	if got := opStatus(t, w, op); got != "Accepted" {
		t.Fatalf("after a refused fail the operation is %q, want Accepted", got)
	}
	r := w.hcpops(t, "", "ops", "fail", op, "-subscription", cliSub, "-reason", "CS lost the cluster", "-by", "alice")
	if r.code != 0 || !strings.Contains(r.stdout, "failed     "+op+" Failed (was Accepted): OperationAbandoned: Abandoned by alice: CS lost the cluster") ||
		!strings.Contains(r.stdout, "resource   cluster demo/lost provisioningState Failed") ||
		!regexp.MustCompile(`notify +ARM is told by hcpopsctl dev \(pid \d+\) on its next tick`).MatchString(r.stdout) {
		t.Fatalf("ops fail: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	st := w.hcpops(t, "", "status", op, "-subscription", cliSub)
	if !strings.Contains(st.stdout, `"code": "OperationAbandoned"`) || !strings.Contains(st.stdout, "Abandoned by alice: CS lost the cluster") {
		t.Errorf("status after ops fail:\n%s", st.stdout)
	}
	res := w.hcpops(t, "", "doc", "get", cliCluster("lost"))
	if !strings.Contains(res.stdout, `"provisioningState": "Failed"`) || regexp.MustCompile(`"activeOperationId": "\S+"`).MatchString(res.stdout) {
		t.Errorf("the cluster after ops fail:\n%s", res.stdout)
	}
	waitFor(t, "dev to tell ARM", func() bool {
		return logged(t, w, op, lifecycle.MsgNotification, func(r devlog.Record) bool {
			return r.Str("outcome") == "delivered" && r.Str("status") == "Failed"
		})
	})
	if !logged(t, w, op, lifecycle.MsgAbandoned, func(r devlog.Record) bool {
		return r.Str("by") == "alice" && r.Str("reason") == "CS lost the cluster" && r.Str("from") == "Accepted" && r.Str("to") == "Failed"
	}) {
		t.Errorf("no %s record with operator and reason in dev.log", lifecycle.MsgAbandoned)
	}
	again := w.hcpops(t, "", "ops", "cancel", op, "-subscription", cliSub, "-reason", "again", "-by", "alice")
	if msg := oneLine(t, again, "ops"); !strings.Contains(msg, "is already Failed; nothing was written") {
		t.Errorf("ops cancel of a Failed operation: %q", msg)
	}
	if got := opStatus(t, w, op); got != "Failed" {
		t.Errorf("after a refused cancel the operation is %q", got)
	}
}

// With nothing running, ops cancel opens the store itself; the operator
// is $USER; an unknown operation is refused.
func TestOpsCancelWithoutDev(t *testing.T) {
	w := newWorkspace(t)
	w.env = append(w.env, "USER=bob")
	op := submitStuck(t, w, "broken", "http://127.0.0.1:9/arm", "-create")
	r := w.hcpops(t, "", "ops", "cancel", op, "-subscription", cliSub, "-reason", "resource document needs repair")
	if r.code != 0 || !strings.Contains(r.stdout, "canceled   "+op+" Canceled (was Accepted): OperationAbandoned: Abandoned by bob: resource document needs repair") ||
		!strings.Contains(r.stdout, "ARM is told by the next hcpopsctl dev or serve on") {
		t.Fatalf("ops cancel: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := opStatus(t, w, op); got != "Canceled" {
		t.Errorf("after ops cancel: %q", got)
	}
	if !logged(t, w, op, lifecycle.MsgAbandoned, func(r devlog.Record) bool { return r.Str("by") == "bob" }) {
		t.Errorf("no %s record in .data/dev.log", lifecycle.MsgAbandoned)
	}
	unknown := w.hcpops(t, "", "ops", "fail", "6e34c52d-4115-4834-abff-933590456a6e", "-subscription", cliSub, "-reason", "x")
	if msg := oneLine(t, unknown, "ops"); !strings.Contains(msg, "no operation") || !strings.Contains(msg, "nothing was written") {
		t.Errorf("ops fail of an unknown operation: %q", msg)
	}
}
