package operator

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/internal/cli"
)

// status prints the ARM operation-status body straight from the store: an
// operator's view, without ARM's caller-visibility rules.
func status(ctx context.Context, env Env, args []string) error {
	const synopsis = "OPERATION (status URL or path, as submit prints it) | -subscription SUB OPERATION_ID"
	fs := cli.Command(env.Prog+" status", synopsis, "Prints an operation's ARM status body, read from the store ("+env.About+").\n"+
		"OPERATION is what submit prints: the status path, the curl's URL (host and ?api-version\n"+
		"are ignored), an hcpOperationResults path, or the operation's UUID with -subscription.")
	sub := fs.String("subscription", "", "subscription ID (when OPERATION is a bare UUID)")
	pos, err := cli.Parse(fs, args, env.Stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(fs, synopsis)
	}
	ref, err := ParseOperationRef(pos[0], *sub)
	if err != nil {
		return err
	}
	s, _, err := env.Connect(ctx, false, false)
	if err != nil {
		return err
	}
	defer s.Close()
	op, err := ReadOperation(ctx, s, ref)
	if err != nil {
		return err
	}
	body, err := op.ToStatus().MarshalIndent()
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, string(body))
	return nil
}

// OperationRef names one operation document.
type OperationRef struct{ Subscription, Name string }

// PK is its partition key.
func (r OperationRef) PK() string { return document.PartitionKey(r.Subscription) }

// ID is its Cosmos id.
func (r OperationRef) ID() string {
	return document.CosmosID(document.OperationResourceID(r.Subscription, r.Name))
}

// ReadOperation reads and parses the operation ref names.
func ReadOperation(ctx context.Context, s store.Store, ref OperationRef) (*document.OperationDocument, error) {
	item, err := s.Get(ctx, ref.PK(), ref.ID())
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("operation %s not found in subscription %s (expired after 7 days, or never written)", ref.Name, ref.Subscription)
	}
	if err != nil {
		return nil, fmt.Errorf("reading operation %s: %w", ref.Name, err)
	}
	return document.ParseOperation(item.Body)
}

// ParseOperationRef accepts what submit and the dev terminal print: a
// status (or results) path, the same as a URL with host and query, or a
// bare UUID with -subscription.
func ParseOperationRef(arg, sub string) (OperationRef, error) {
	path := arg
	if u, err := url.Parse(arg); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		path = u.Path
	} else if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if !strings.HasPrefix(path, "/") {
		if sub == "" {
			return OperationRef{}, fmt.Errorf("OPERATION %q is a bare id: pass -subscription SUB, or the status path submit printed", arg)
		}
		if err := CheckSubscription("-subscription", sub); err != nil {
			return OperationRef{}, err
		}
		name, ok := document.CanonicalUUID(arg)
		if !ok {
			return OperationRef{}, fmt.Errorf("OPERATION %q: an operation id is a UUID such as 6e34c52d-4115-4834-abff-933590456a6e", arg)
		}
		return OperationRef{sub, name}, nil
	}
	rid, err := document.ParseResourceID("OPERATION", path)
	if err != nil {
		return OperationRef{}, err
	}
	if !isOperationPath(rid.ResourceType.Types) {
		return OperationRef{}, fmt.Errorf("OPERATION %q is not an %s or %s path", arg, arm.OperationStatusesType, arm.OperationResultsType)
	}
	if err := CheckSubscription("OPERATION's subscription", rid.SubscriptionID); err != nil {
		return OperationRef{}, err
	}
	if sub != "" && !strings.EqualFold(sub, rid.SubscriptionID) {
		return OperationRef{}, fmt.Errorf("-subscription %s and OPERATION's subscription %s differ; give one of them", sub, rid.SubscriptionID)
	}
	name, ok := document.CanonicalUUID(rid.Name)
	if !ok {
		return OperationRef{}, fmt.Errorf("OPERATION %q: its id %q is not a UUID", arg, rid.Name)
	}
	return OperationRef{rid.SubscriptionID, name}, nil
}

// isOperationPath tells an hcpOperationStatuses or hcpOperationResults
// path, with or without locations/{loc}, by its last type segment.
func isOperationPath(types []string) bool {
	return len(types) > 0 && (strings.EqualFold(types[len(types)-1], arm.OperationStatusesType) ||
		strings.EqualFold(types[len(types)-1], arm.OperationResultsType))
}
