package clusterservice

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestMeasuredCountsEveryMethod calls every Client method through Measured
// over a client whose methods all panic (a nil embedded interface): a
// method Measured does not wrap panics before anything is counted.
func TestMeasuredCountsEveryMethod(t *testing.T) {
	type panicking struct{ Client }
	m := reflect.ValueOf(Measured(panicking{}))
	iface := reflect.TypeOf((*Client)(nil)).Elem()
	for i := range iface.NumMethod() {
		name := iface.Method(i).Name
		t.Run(name, func(t *testing.T) {
			ctx, calls := WithCalls(context.Background())
			method := m.MethodByName(name)
			args := []reflect.Value{reflect.ValueOf(ctx)}
			for j := 1; j < method.Type().NumIn(); j++ {
				args = append(args, reflect.Zero(method.Type().In(j)))
			}
			func() {
				defer func() { _ = recover() }()
				method.Call(args)
			}()
			if got := calls.Summary().Count; got != 1 {
				t.Errorf("%s: %d calls counted, want 1: add it to measure.go", name, got)
			}
		})
	}
}

type fixedClient struct {
	Client
	err error
}

func (f fixedClient) GetCluster(ctx context.Context, href string) (Cluster, error) {
	return Cluster{ID: href}, f.err
}

func TestCallsSummary(t *testing.T) {
	for _, tc := range []struct {
		name       string
		errs       []error
		wantErrors int
	}{
		{"none", nil, 0},
		{"ok", []error{nil, nil}, 0},
		{"404 is an answer", []error{&Error{Status: 404}}, 0},
		{"5xx and transport", []error{&Error{Status: 503}, errors.New("dial tcp: refused"), nil}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, calls := WithCalls(context.Background())
			for _, err := range tc.errs {
				c, gotErr := Measured(fixedClient{err: err}).GetCluster(ctx, "/x")
				if c.ID != "/x" || !errors.Is(gotErr, err) {
					t.Fatalf("Measured changed the answer: %v, %v", c, gotErr)
				}
			}
			s := calls.Summary()
			if s.Count != len(tc.errs) || s.Errors != tc.wantErrors {
				t.Errorf("summary = %+v, want %d calls, %d errors", s, len(tc.errs), tc.wantErrors)
			}
		})
	}
	// No Calls in the context: the call goes through, nothing is counted.
	if _, err := Measured(fixedClient{}).GetCluster(context.Background(), "/x"); err != nil {
		t.Fatal(err)
	}
	if s := (*Calls)(nil).Summary(); s != (CallSummary{}) {
		t.Errorf("nil Calls summary = %+v", s)
	}
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(hundred...), 50, 50 * time.Millisecond},
		{ms(hundred...), 99, 99 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 1000), 99, 1000 * time.Millisecond},
	} {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %d) = %v, want %v", tc.sorted, tc.p, got, tc.want)
		}
	}
}

func TestCallSummaryAttrs(t *testing.T) {
	got := CallSummary{Count: 3, Errors: 1, P50: 1500 * time.Microsecond, P99: 2 * time.Second}.Attrs()
	want := "[cs_calls=3 cs_errors=1 cs_p50_ms=1.5 cs_p99_ms=2000]"
	if s := fmt.Sprint(got); s != want {
		t.Errorf("Attrs() = %s, want %s", s, want)
	}
}
