package soak

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/core/arm"
)

func notify(t *testing.T, uri, status string) int {
	t.Helper()
	resp, err := http.Post(uri, "application/json", strings.NewReader(fmt.Sprintf(`{"id":"x","name":"n","status":%q}`, status)))
	must(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestSinkFailsAShareOfPOSTs(t *testing.T) {
	s, err := startSink(0.3, 7)
	must(t, err)
	defer s.Close()
	uri := s.uri("c001/create")
	answered := map[int]int{}
	for range 200 {
		answered[notify(t, uri, "Succeeded")]++
	}
	attempts, failures := s.counts()
	if attempts != 200 || failures != answered[http.StatusInternalServerError] || failures+answered[http.StatusOK] != 200 {
		t.Fatalf("counts %d attempts %d failures; answers %v", attempts, failures, answered)
	}
	if failures < 40 || failures > 80 {
		t.Errorf("%d of 200 POSTs failed, want about 30%%", failures)
	}
	got, err := s.received(uri)
	must(t, err)
	if len(got) != answered[http.StatusOK] || !slices.Contains(got, arm.ProvisioningStateSucceeded) {
		t.Errorf("received %d statuses, want the %d answered 200", len(got), answered[http.StatusOK])
	}
	if got, _ := s.received(s.uri("other")); len(got) != 0 {
		t.Errorf("another URI received %v", got)
	}
	if _, err := s.received("http://elsewhere/notify/x"); err == nil {
		t.Error("a URI of another host was accepted")
	}
}

func TestSinkRefusesWhatIsNoNotification(t *testing.T) {
	s, err := startSink(0, 1)
	must(t, err)
	defer s.Close()
	resp, err := http.Get(s.uri("a"))
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d, want 405", resp.StatusCode)
	}
	resp, err = http.Post(s.uri("a"), "application/json", strings.NewReader("not json"))
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is no status answered %d, want 400", resp.StatusCode)
	}
	if n := notify(t, s.uri("a"), "Failed"); n != http.StatusOK {
		t.Errorf("with no failure rate a POST answered %d", n)
	}
	for _, rate := range []float64{-0.1, 1} {
		if _, err := startSink(rate, 1); err == nil || !strings.Contains(err.Error(), "failure rate") {
			t.Errorf("rate %v: %v, want an error naming the failure rate", rate, err)
		}
	}
}
