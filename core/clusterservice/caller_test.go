package clusterservice

import (
	"context"
	"testing"
)

type named string

func (n *named) Name() string { return string(*n) }

func TestOperationOf(t *testing.T) {
	op := named("op-2")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"none", context.Background(), ""},
		{"by id", WithOperation(context.Background(), "op-1"), "op-1"},
		{"named", WithNamedOperation(context.Background(), &op), "op-2"},
		{"innermost", WithNamedOperation(WithOperation(context.Background(), "op-1"), &op), "op-2"},
	} {
		if got := OperationOf(tc.ctx); got != tc.want {
			t.Errorf("%s: OperationOf = %q, want %q", tc.name, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { WithNamedOperation(context.Background(), &op) }); n > 1 {
		t.Errorf("WithNamedOperation allocates %v times; want only its context", n)
	}
}
