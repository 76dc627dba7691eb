package clusterservice

import "context"

type operationKey struct{}

// WithOperation returns ctx naming the operation whose work makes the CS
// calls under it, so what a client logs about those calls (the SDK's own
// retries, above all) names that operation too.
func WithOperation(ctx context.Context, operationID string) context.Context {
	return context.WithValue(ctx, operationKey{}, operationID)
}

// Named is an operation that can say its name.
type Named interface{ Name() string }

// WithNamedOperation is WithOperation for op, whose name is asked only
// when a client logs it: a tick names every operation it polls, and few
// of their calls are ever logged (a name held as a string cost one more
// allocation each).
func WithNamedOperation(ctx context.Context, op Named) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

// OperationOf is the operation ctx names, or "".
func OperationOf(ctx context.Context) string {
	switch v := ctx.Value(operationKey{}).(type) {
	case string:
		return v
	case Named:
		return v.Name()
	}
	return ""
}
