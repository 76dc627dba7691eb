package clusterservice

import "context"

type operationKey struct{}

// WithOperation returns ctx naming the operation whose work makes the CS
// calls under it, so what a client logs about those calls (the SDK's own
// retries, above all) names that operation too.
func WithOperation(ctx context.Context, operationID string) context.Context {
	return context.WithValue(ctx, operationKey{}, operationID)
}

// OperationOf is the operation ctx names, or "".
func OperationOf(ctx context.Context) string {
	id, _ := ctx.Value(operationKey{}).(string)
	return id
}
