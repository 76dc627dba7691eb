package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/harness/devhost/devlog"
)

// Beside a running dev, submit's operations are notified at dev's ARM
// sink unless told otherwise, and hcpopsctl sink steers it: with fail 2,
// an operation's first two notifications fail and the third is delivered,
// as dev's log records, and the sink counts them.
func TestSubmitNotifiesDevsSink(t *testing.T) {
	w := newWorkspace(t)
	w.env = append(w.env, lifecycle.EnvNotifyBackoffBase+"=100ms", lifecycle.EnvNotifyBackoffMax+"=200ms")
	d := w.startDev(t)

	if r := w.hcpops(t, "", "sink", "fail", "2"); r.code != 0 || !strings.Contains(r.stdout, "sink "+d.sink+": ok; fail next 2;") {
		t.Fatalf("sink fail 2: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r := w.hcpops(t, "", "submit", "-resource", cliCluster("told"))
	want := "notify    " + d.sink + "/notify/demo/told/create (hcpopsctl dev's ARM sink; -notification-uri none for none)"
	if !strings.Contains(r.stdout, want) {
		t.Fatalf("submit beside dev:\n%s%s\nwant the line %q", r.stdout, r.stderr, want)
	}
	op := regexp.MustCompile(`(?m)^operation (\S+)$`).FindStringSubmatch(r.stdout)[1]
	var outcomes []string
	waitFor(t, "the notification delivered", func() bool {
		outcomes = nil
		err := devlog.Scan(w.dir+"/.data", func(rec devlog.Record) {
			if rec.OperationID == op && rec.Msg == lifecycle.MsgNotification {
				outcomes = append(outcomes, rec.Str("outcome"))
			}
		}, op)
		if err != nil {
			t.Fatal(err)
		}
		return len(outcomes) > 0 && outcomes[len(outcomes)-1] == lifecycle.NotificationDelivered
	})
	if strings.Join(outcomes, ",") != "failed,failed,delivered" {
		t.Errorf("notification attempts = %v, want two failed, then delivered", outcomes)
	}
	if r := w.hcpops(t, "", "sink"); !strings.Contains(r.stdout, ": ok; fail next 0; 3 POSTs answered, 2 of them failed on purpose; 0 held now") {
		t.Errorf("sink after: %q %q", r.stdout, r.stderr)
	}
	if r := w.hcpops(t, "", "submit", "-resource", cliCluster("untold"), "-notification-uri", "none"); r.code != 0 || strings.Contains(r.stdout, "notify ") {
		t.Errorf("submit -notification-uri none: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := w.hcpops(t, "", "sink", "explode"); r.code == 0 {
		t.Errorf("sink explode: exit 0, want its usage")
	}
}
