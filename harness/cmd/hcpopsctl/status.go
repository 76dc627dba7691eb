package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/hcpops/hcpops/harness/localstore"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/internal/cli"
)

// status prints the ARM operation-status body straight from the store: an
// operator's view, without ARM's caller-visibility rules.
func status(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	const synopsis = "OPERATION (status URL or path, as submit prints it) | -subscription SUB OPERATION_ID"
	fs := cli.Command(prog+" status", synopsis, "Prints an operation's ARM status body, read from the store (Cosmos DB when configured,\n"+
		"else the running hcpopsctl dev/serve's store, else the embedded store in $HCPOPS_DATA_DIR).\n"+
		"OPERATION is what submit prints: the status path, the curl's URL (host and ?api-version\n"+
		"are ignored), an hcpOperationResults path, or the operation's UUID with -subscription.")
	sub := fs.String("subscription", "", "subscription ID (when OPERATION is a bare UUID)")
	pos, err := cli.Parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(fs, synopsis)
	}
	ref, err := parseOperationRef(pos[0], *sub)
	if err != nil {
		return err
	}
	s, _, err := connect(ctx, getenv, localstore.ReadOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	op, err := readOperation(ctx, s, ref)
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

// operationRef names one operation document.
type operationRef struct{ subscription, name string }

func (r operationRef) pk() string { return document.PartitionKey(r.subscription) }
func (r operationRef) id() string {
	return document.CosmosID(document.OperationResourceID(r.subscription, r.name))
}

func readOperation(ctx context.Context, s store.Store, ref operationRef) (*document.OperationDocument, error) {
	item, err := s.Get(ctx, ref.pk(), ref.id())
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("operation %s not found in subscription %s (expired after 7 days, or never written)", ref.name, ref.subscription)
	}
	if err != nil {
		return nil, fmt.Errorf("reading operation %s: %w", ref.name, err)
	}
	return document.ParseOperation(item.Body)
}

// parseOperationRef accepts what submit and the dev terminal print: a
// status (or results) path, the same as a URL with host and query, or a
// bare UUID with -subscription.
func parseOperationRef(arg, sub string) (operationRef, error) {
	path := arg
	if u, err := url.Parse(arg); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		path = u.Path
	} else if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if !strings.HasPrefix(path, "/") {
		if sub == "" {
			return operationRef{}, fmt.Errorf("OPERATION %q is a bare id: pass -subscription SUB, or the status path submit printed", arg)
		}
		if err := checkSubscription("-subscription", sub); err != nil {
			return operationRef{}, err
		}
		name, ok := document.CanonicalUUID(arg)
		if !ok {
			return operationRef{}, fmt.Errorf("OPERATION %q: an operation id is a UUID such as 6e34c52d-4115-4834-abff-933590456a6e", arg)
		}
		return operationRef{sub, name}, nil
	}
	rid, err := document.ParseResourceID("OPERATION", path)
	if err != nil {
		return operationRef{}, err
	}
	if !isOperationPath(rid.ResourceType.Types) {
		return operationRef{}, fmt.Errorf("OPERATION %q is not an %s or %s path", arg, arm.OperationStatusesType, arm.OperationResultsType)
	}
	if err := checkSubscription("OPERATION's subscription", rid.SubscriptionID); err != nil {
		return operationRef{}, err
	}
	if sub != "" && !strings.EqualFold(sub, rid.SubscriptionID) {
		return operationRef{}, fmt.Errorf("-subscription %s and OPERATION's subscription %s differ; give one of them", sub, rid.SubscriptionID)
	}
	name, ok := document.CanonicalUUID(rid.Name)
	if !ok {
		return operationRef{}, fmt.Errorf("OPERATION %q: its id %q is not a UUID", arg, rid.Name)
	}
	return operationRef{rid.SubscriptionID, name}, nil
}

// isOperationPath tells an hcpOperationStatuses or hcpOperationResults
// path, with or without locations/{loc}, by its last type segment.
func isOperationPath(types []string) bool {
	return len(types) > 0 && (strings.EqualFold(types[len(types)-1], arm.OperationStatusesType) ||
		strings.EqualFold(types[len(types)-1], arm.OperationResultsType))
}
