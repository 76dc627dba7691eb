package armsink

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/harness/invoke"
)

// sinkPost is one request a test sends the sink.
type sinkPost struct {
	method, label, body string
	want                int // status code
}

func statusBody(s arm.ProvisioningState) string {
	return fmt.Sprintf(`{"id":"x","name":"n","status":%q}`, s)
}

func send(t *testing.T, s *Sink, p sinkPost) int {
	t.Helper()
	req, err := http.NewRequest(p.method, s.URI(p.label), strings.NewReader(p.body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", p.method, p.label, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestSinkRecordsWhatWasDelivered(t *testing.T) {
	tests := []struct {
		name      string
		posts     []sinkPost
		delivered map[string][]arm.ProvisioningState
		notified  map[string]bool
		attempts  int
		failures  int
	}{
		{
			name: "statuses recorded by path in order",
			posts: []sinkPost{
				{http.MethodPost, "c1/create", statusBody(arm.ProvisioningStateProvisioning), http.StatusOK},
				{http.MethodPost, "c1/create", statusBody(arm.ProvisioningStateSucceeded), http.StatusOK},
				{http.MethodPost, "c2/delete", statusBody(arm.ProvisioningStateDeleting), http.StatusOK},
			},
			delivered: map[string][]arm.ProvisioningState{
				"c1/create": {arm.ProvisioningStateProvisioning, arm.ProvisioningStateSucceeded},
				"c2/delete": {arm.ProvisioningStateDeleting},
				"c3/create": nil,
			},
			notified: map[string]bool{"c1/create": true, "c2/delete": false, "c3/create": false},
			attempts: 3,
		},
		{
			name: "what is no notification is refused and not counted",
			posts: []sinkPost{
				{http.MethodGet, "a", "", http.StatusMethodNotAllowed},
				{http.MethodPut, "a", statusBody(arm.ProvisioningStateFailed), http.StatusMethodNotAllowed},
				{http.MethodPost, "a", "not json", http.StatusBadRequest},
				{http.MethodPost, "a", statusBody(arm.ProvisioningStateFailed), http.StatusOK},
			},
			delivered: map[string][]arm.ProvisioningState{"a": {arm.ProvisioningStateFailed}},
			notified:  map[string]bool{"a": true},
			attempts:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(t.Context(), Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i, p := range tt.posts {
				if got := send(t, s, p); got != p.want {
					t.Errorf("request %d (%s %s) answered %d, want %d", i, p.method, p.label, got, p.want)
				}
			}
			for label, want := range tt.delivered {
				got, err := s.Delivered(s.URI(label))
				if err != nil {
					t.Fatalf("%s: %v", label, err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s delivered %v, want %v", label, got, want)
				}
			}
			for label, want := range tt.notified {
				if got := s.Notified(s.URI(label)); got != want {
					t.Errorf("%s notified %v, want %v", label, got, want)
				}
			}
			if a, f := s.Counts(); a != tt.attempts || f != tt.failures {
				t.Errorf("counts %d attempts %d failures, want %d and %d", a, f, tt.attempts, tt.failures)
			}
		})
	}
}

func TestSinkFailsASeededShare(t *testing.T) {
	run := func() (answers []int, attempts, failures int, delivered []arm.ProvisioningState) {
		s, err := Start(t.Context(), Config{FailRate: 0.3, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p := sinkPost{http.MethodPost, "c001/create", statusBody(arm.ProvisioningStateSucceeded), 0}
		for range 200 {
			answers = append(answers, send(t, s, p))
		}
		got, err := s.Delivered(s.URI(p.label))
		if err != nil {
			t.Fatal(err)
		}
		attempts, failures = s.Counts()
		return answers, attempts, failures, got
	}
	answers, attempts, failures, delivered := run()
	ok := 0
	for _, a := range answers {
		switch a {
		case http.StatusOK:
			ok++
		case http.StatusInternalServerError:
		default:
			t.Fatalf("a POST answered %d, want 200 or 500", a)
		}
	}
	if attempts != 200 || failures != 200-ok || len(delivered) != ok {
		t.Fatalf("counts %d attempts %d failures %d delivered; %d answered 200", attempts, failures, len(delivered), ok)
	}
	if !slices.Contains(delivered, arm.ProvisioningStateSucceeded) {
		t.Errorf("delivered %v, want the Succeeded that was POSTed", delivered)
	}
	if failures < 40 || failures > 80 {
		t.Errorf("%d of 200 POSTs failed, want about 30%%", failures)
	}
	again, _, _, _ := run()
	if !slices.Equal(answers, again) {
		t.Error("the same seed failed other POSTs")
	}
}

func TestSinkFailsTheFirstN(t *testing.T) {
	ok, fail := http.StatusOK, http.StatusInternalServerError
	tests := []struct {
		name      string
		cfg       Config
		failNext  map[int]int // before POST i, FailNext(n)
		answers   []int
		delivered []arm.ProvisioningState
	}{
		{name: "none", answers: []int{ok, ok}, delivered: []arm.ProvisioningState{"s0", "s1"}},
		{name: "first two", cfg: Config{FailFirst: 2}, answers: []int{fail, fail, ok, ok},
			delivered: []arm.ProvisioningState{"s2", "s3"}},
		{name: "armed later", failNext: map[int]int{1: 1}, answers: []int{ok, fail, ok},
			delivered: []arm.ProvisioningState{"s0", "s2"}},
		{name: "re-armed replaces", cfg: Config{FailFirst: 5}, failNext: map[int]int{1: 0}, answers: []int{fail, ok},
			delivered: []arm.ProvisioningState{"s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(t.Context(), tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i, want := range tt.answers {
				if n, ok := tt.failNext[i]; ok {
					s.FailNext(n)
				}
				st := arm.ProvisioningState(fmt.Sprintf("s%d", i))
				if got := send(t, s, sinkPost{http.MethodPost, "op", statusBody(st), 0}); got != want {
					t.Errorf("POST %d answered %d, want %d", i, got, want)
				}
			}
			calls, err := s.Calls(s.URI("op"))
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != len(tt.answers) {
				t.Fatalf("%d calls recorded, want %d", len(calls), len(tt.answers))
			}
			for i, c := range calls {
				if c.Status != tt.answers[i] || c.Body.Status != arm.ProvisioningState(fmt.Sprintf("s%d", i)) {
					t.Errorf("call %d = %d %s, want %d s%d", i, c.Status, c.Body.Status, tt.answers[i], i)
				}
			}
			if got, _ := s.Delivered(s.URI("op")); !slices.Equal(got, tt.delivered) {
				t.Errorf("delivered %v, want %v", got, tt.delivered)
			}
		})
	}
}

func TestSinkRefusesBadConfigAndForeignURIs(t *testing.T) {
	if _, err := Start(t.Context(), Config{FailFirst: -1}); err == nil || !strings.Contains(err.Error(), "fail first -1") {
		t.Errorf("FailFirst -1: %v, want an error naming it", err)
	}
	for _, rate := range []float64{-0.1, 1, 1.5} {
		if _, err := Start(t.Context(), Config{FailRate: rate}); err == nil || !strings.Contains(err.Error(), "failure rate") {
			t.Errorf("rate %v: %v, want an error naming the failure rate", rate, err)
		}
	}
	s, err := Start(t.Context(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || !strings.HasPrefix(s.URI("x"), s.URL()+"/") {
		t.Errorf("URL %q, URI %q: want a loopback base and a URI below it", s.URL(), s.URI("x"))
	}
	if _, err := s.Delivered("http://elsewhere/notify/x"); err == nil {
		t.Error("a URI of another host was accepted")
	}
	if _, err := s.Calls("http://elsewhere/notify/x"); err == nil {
		t.Error("a URI of another host was accepted by Calls")
	}
	if s.Notified("http://elsewhere/notify/x") {
		t.Error("a URI of another host counts as notified")
	}
}

// The notifier and the sink are meant to meet in local runs: a loopback
// notifier's POST lands as a delivered terminal status.
func TestSinkReceivesTheNotifier(t *testing.T) {
	s, err := Start(t.Context(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := notification.New(notification.Config{AllowLoopback: true}, nil)
	uri := s.URI("c1/create")
	if err := n.Notify(t.Context(), uri, arm.OperationStatus{ID: "op", Status: arm.ProvisioningStateSucceeded}); err != nil {
		t.Fatal(err)
	}
	if !s.Notified(uri) {
		t.Error("the notifier's POST was not recorded")
	}
}

func TestSinkStops(t *testing.T) {
	tests := []struct {
		name string
		stop func(cancel context.CancelFunc, s *Sink) error
	}{
		{"when its context ends", func(cancel context.CancelFunc, _ *Sink) error { cancel(); return nil }},
		{"on Close", func(_ context.CancelFunc, s *Sink) error { return s.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := Start(ctx, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.stop(cancel, s); err != nil {
				t.Fatal(err)
			}
			// The ctx watch closes the server on its own goroutine, which a
			// loaded machine may run late: wait for it to say it has.
			select {
			case <-s.Stopped():
			case <-time.After(10 * time.Second):
				t.Fatal("the sink did not stop within 10s")
			}
			client := &http.Client{Timeout: 10 * time.Second}
			resp, postErr := client.Post(s.URI("a"), "application/json", strings.NewReader(statusBody(arm.ProvisioningStateSucceeded)))
			if postErr == nil {
				resp.Body.Close()
				t.Fatal("the sink still answers after it was stopped")
			}
			var urlErr interface{ Timeout() bool }
			if errors.As(postErr, &urlErr) && urlErr.Timeout() {
				t.Errorf("a POST to the stopped sink timed out instead of being refused: %v", postErr)
			}
		})
	}
}

// AwaitNotified returns once a terminal status lands, not at a
// non-terminal one, and gives up with its context.
func TestAwaitNotified(t *testing.T) {
	s, err := Start(t.Context(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waited := make(chan error, 1)
	go func() { waited <- s.AwaitNotified(t.Context(), s.URI("a")) }()
	send(t, s, sinkPost{method: http.MethodPost, label: "a", body: statusBody(arm.ProvisioningStateProvisioning)})
	send(t, s, sinkPost{method: http.MethodPost, label: "b", body: statusBody(arm.ProvisioningStateSucceeded)})
	select {
	case err := <-waited:
		t.Fatalf("AwaitNotified returned %v before a terminal status at its URI", err)
	default:
	}
	send(t, s, sinkPost{method: http.MethodPost, label: "a", body: statusBody(arm.ProvisioningStateFailed)})
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("AwaitNotified: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AwaitNotified did not return after the terminal status")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.AwaitNotified(ctx, s.URI("never")); !errors.Is(err, context.Canceled) {
		t.Errorf("AwaitNotified with a done context = %v, want context.Canceled", err)
	}
}

// A sink New makes listens nowhere; a notifier reaches it in memory and
// it records what arrived as a listening one does.
func TestNewIsReachedInMemory(t *testing.T) {
	s, err := New(Config{FailFirst: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URI("a"), InMemoryURL+"/") {
		t.Errorf("URI %q is not under %s", s.URI("a"), InMemoryURL)
	}
	n := notification.New(notification.Config{AllowLoopback: true}, &http.Client{Transport: invoke.InMemory(s)})
	body := arm.OperationStatus{ID: "op", Status: arm.ProvisioningStateSucceeded}
	if err := n.Notify(t.Context(), s.URI("a"), body); err == nil {
		t.Error("the first POST was answered 200; want the FailFirst 500")
	}
	if err := n.Notify(t.Context(), s.URI("a"), body); err != nil {
		t.Fatalf("the second POST: %v", err)
	}
	if calls, _ := s.Calls(s.URI("a")); len(calls) != 2 || !s.Notified(s.URI("a")) {
		t.Errorf("calls %+v; want a failed and a delivered POST", calls)
	}
	if _, err := New(Config{FailRate: 1}); err == nil {
		t.Error("New took a failure rate of 1")
	}
}
