package cosmos

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/hcpops/hcpops/core/store"
)

// mapError wraps err with the store sentinel for its HTTP status, keeping
// the *azcore.ResponseError reachable through errors.As for diagnostics.
func mapError(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if hint := trustHint(err); hint != "" {
		return fmt.Errorf("%s: %w (%s)", what, err, hint)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if sentinel := sentinelFor(re.StatusCode); sentinel != nil {
			return fmt.Errorf("%s: %w: %w", what, sentinel, err)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// sentinelFor maps a Cosmos DB status code to the store's sentinel error.
func sentinelFor(status int) error {
	switch status {
	case http.StatusNotFound:
		return store.ErrNotFound
	case http.StatusConflict:
		return store.ErrConflict
	case http.StatusPreconditionFailed:
		return store.ErrPreconditionFailed
	case http.StatusBadRequest:
		return store.ErrInvalid
	}
	return nil
}
