package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// status prints the ARM operation-status body straight from the store: an
// operator's view, without ARM's caller-visibility rules.
func status(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	const synopsis = "OPERATION_STATUS_PATH | -subscription SUB OPERATION_ID"
	fs := command("status", synopsis, "Prints an operation's ARM status body, read from the store (Cosmos DB when configured,\nelse the running hcpops dev/serve's store, else the embedded store in $HCPOPS_DATA_DIR).")
	sub := fs.String("subscription", "", "subscription ID (when OPERATION_ID is a bare UUID)")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(fs, synopsis)
	}
	subscription, name, err := operationRef(pos[0], *sub)
	if err != nil {
		return err
	}
	s, _, err := app.ConnectStore(ctx, getenv, app.ReadOnly, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer s.Close()
	item, err := s.Get(ctx, document.PartitionKey(subscription), document.CosmosID(document.OperationResourceID(subscription, name)))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("operation %s not found in subscription %s (expired or never written)", name, subscription)
	}
	if err != nil {
		return err
	}
	op, err := document.ParseOperation(item.Body)
	if err != nil {
		return err
	}
	body, err := op.ToStatus().MarshalIndent()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, string(body))
	return nil
}

// operationRef accepts an operationId path or a UUID plus -subscription.
func operationRef(arg, sub string) (string, string, error) {
	if strings.HasPrefix(arg, "/") {
		rid, err := document.ParseResourceID("OPERATION_ID", arg)
		if err != nil {
			return "", "", err
		}
		if !isOperationStatus(rid.ResourceType.Types) {
			return "", "", fmt.Errorf("OPERATION_ID %q is not an hcpOperationStatuses path", arg)
		}
		return rid.SubscriptionID, rid.Name, checkSubscription("OPERATION_ID's subscription", rid.SubscriptionID)
	}
	if sub == "" {
		return "", "", fmt.Errorf("OPERATION_ID %q is a bare name: pass -subscription, or the full status path", arg)
	}
	if err := checkSubscription("-subscription", sub); err != nil {
		return "", "", err
	}
	if _, err := uuid.Parse(arg); err != nil {
		return "", "", fmt.Errorf("OPERATION_ID %q: want the operation's UUID or its status path", arg)
	}
	return sub, arg, nil
}

// isOperationStatus tells an hcpOperationStatuses path, with or without
// locations/{loc}, by its last type segment.
func isOperationStatus(types []string) bool {
	return len(types) > 0 && strings.EqualFold(types[len(types)-1], "hcpOperationStatuses")
}
