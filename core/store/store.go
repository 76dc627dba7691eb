// Package store defines the document store the lifecycle runs on: the subset
// of Cosmos DB that ARO-HCP's Resources container is used through. Two
// implementations honour the same contract (embedded bbolt and Cosmos DB); a
// shared contract suite in storetest proves it.
//
// Documents are raw JSON. The store owns only the system fields (_rid, _self,
// _etag, _attachments, _ts); every other byte is the caller's.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; implementations wrap them so errors.Is works.
var (
	// ErrNotFound: no such document, or it is soft-deleted or expired.
	ErrNotFound = errors.New("document not found")
	// ErrConflict: a create found a document with the same id (HTTP 409).
	ErrConflict = errors.New("document already exists")
	// ErrPreconditionFailed: the If-Match etag is stale (HTTP 412).
	ErrPreconditionFailed = errors.New("etag precondition failed")
	// ErrInvalid: the request itself is malformed (missing id, empty etag ...).
	ErrInvalid = errors.New("invalid store request")
	// ErrFeedGap: the change feed cannot resume from the continuation given:
	// the store did not issue it (another store, a container since
	// recreated, garbage). What changed since is out of the reader's reach;
	// it must rebuild its state from a full read.
	ErrFeedGap = errors.New("change feed gap")
)

// feedSincePrefix marks a continuation that is a start time, not a
// position: no store issues one, so it cannot be mistaken for theirs.
const feedSincePrefix = "since:"

// FeedSince is a continuation that starts the change feed at t: the first
// read from it returns the changes whose latest write is at or after t, to
// the store's timestamp resolution (whole seconds, as Cosmos DB's _ts, so
// changes earlier in t's second may come too), and a position to go on
// from. It is how a reader starts from a time or from now without reading
// the whole feed first.
func FeedSince(t time.Time) string {
	return feedSincePrefix + t.UTC().Format(time.RFC3339Nano)
}

// ParseFeedSince says whether continuation came from FeedSince and, if so,
// its time; a since: continuation that does not parse is ErrFeedGap.
func ParseFeedSince(continuation string) (t time.Time, ok bool, err error) {
	rest, ok := strings.CutPrefix(continuation, feedSincePrefix)
	if !ok {
		return time.Time{}, false, nil
	}
	t, err = time.Parse(time.RFC3339Nano, rest)
	if err != nil {
		return time.Time{}, true, fmt.Errorf("%w: continuation %.80q: start time: %v", ErrFeedGap, continuation, err)
	}
	return t, true, nil
}

// MaxReadMany bounds the refs of one ReadMany: Cosmos DB answers up to
// 1000 ids with one query, and a tick reads a page at a time.
const MaxReadMany = 1000

// CheckReadMany checks a ReadMany's refs against MaxReadMany and the
// backend's own rules for partition keys and ids, so every backend refuses
// the same batch the same way, before any of it is read.
func CheckReadMany(refs []DocRef, checkPartitionKey, checkID func(string) error) error {
	if len(refs) > MaxReadMany {
		return fmt.Errorf("%w: %d documents, more than %d", ErrInvalid, len(refs), MaxReadMany)
	}
	for _, r := range refs {
		if err := checkPartitionKey(r.PartitionKey); err != nil {
			return fmt.Errorf("document %q: %w", r.ID, err)
		}
		if err := checkID(r.ID); err != nil {
			return err
		}
	}
	return nil
}

// DocRef names one document: its partition and its id.
type DocRef struct {
	PartitionKey string
	ID           string
}

// Item is one stored document with its current etag.
type Item struct {
	// Body is the document as stored, including the system fields.
	Body []byte
	// ETag is the value to send as If-Match on the next replace.
	ETag string
}

// OpKind is the kind of one step of a transactional batch.
type OpKind string

const (
	OpCreate  OpKind = "Create"
	OpReplace OpKind = "Replace"
	OpDelete  OpKind = "Delete"
)

// BatchOp is one step of a transactional batch. Replace and Delete require
// IfMatch: nothing in this project writes unconditionally.
type BatchOp struct {
	Kind    OpKind
	ID      string // Replace, Delete; Create takes the id from Body
	Body    []byte // Create, Replace
	IfMatch string // Replace, Delete
}

// BatchError says which step of a batch failed and why; the batch as a whole
// was rolled back. Err wraps ErrConflict, ErrPreconditionFailed or ErrNotFound.
type BatchError struct {
	Index int
	Op    OpKind
	ID    string
	Err   error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("batch step %d (%s %s): %v", e.Index, e.Op, e.ID, e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// ActiveOperationsQuery selects operation documents the way ARO-HCP's
// ListActiveOperations does: resourceType hcpOperationStatuses (any casing),
// a non-empty resourceID, not soft-deleted, and status not terminal.
type ActiveOperationsQuery struct {
	// WithPendingNotification also returns terminal operations that still
	// carry a non-empty notificationUri, so failed notifications are retried.
	WithPendingNotification bool
	// PageSize bounds one page; 0 means the implementation's default.
	PageSize int
}

// FeedPage is one read of the change feed.
type FeedPage struct {
	// Items are the latest versions of changed documents, in change order.
	Items []Item
	// Continuation resumes the feed after Items; persist it to resume later.
	Continuation string
}

// Store is the document store contract. Partition keys are lower-case
// subscription IDs; ids are ARO-HCP's hashed Cosmos ids.
type Store interface {
	// Get is a point read. Soft-deleted and expired documents are ErrNotFound.
	Get(ctx context.Context, partitionKey, id string) (Item, error)
	// ReadMany is a batch of point reads, in one round trip where the
	// store can (Cosmos DB: one query per physical partition, whatever the
	// logical partitions): the poll tick reads a page's resources with it.
	// The result holds the live documents found; a document that is
	// missing, soft-deleted or expired is simply absent. More than
	// MaxReadMany refs, or an invalid one, is ErrInvalid.
	ReadMany(ctx context.Context, refs []DocRef) (map[DocRef]Item, error)
	// Create writes a new document (id taken from its body); ErrConflict if
	// the id is taken.
	Create(ctx context.Context, partitionKey string, doc []byte) (Item, error)
	// Replace overwrites a document if its etag still equals ifMatch.
	Replace(ctx context.Context, partitionKey, id string, doc []byte, ifMatch string) (Item, error)
	// SoftDelete marks a document deleted as ARO-HCP does: deletionTimestamp
	// set, ttl 30, properties.cosmosMetadata.instanceVersion bumped, written
	// with If-Match. ErrNotFound if it is already gone.
	SoftDelete(ctx context.Context, partitionKey, id string) error
	// Batch runs ops atomically on one partition; on failure nothing is
	// written and the error is a *BatchError. It returns one Item per op
	// (empty for deletes).
	Batch(ctx context.Context, partitionKey string, ops []BatchOp) ([]Item, error)
	// ActiveOperations streams matching operation documents page by page
	// across all partitions; it never holds the whole result in memory.
	ActiveOperations(ctx context.Context, q ActiveOperationsQuery, page func([]Item) error) error
	// Children streams the live documents in partitionKey whose resourceID
	// starts with parentResourceID+"/" (case-insensitive), page by page.
	Children(ctx context.Context, partitionKey, parentResourceID string, page func([]Item) error) error
	// Partition streams every live document of partitionKey, page by page,
	// whatever it holds (a document with no resourceID too): what an
	// operator lists to see everything a subscription's partition keeps.
	Partition(ctx context.Context, partitionKey string, page func([]Item) error) error
	// ChangeFeed returns up to maxItems changes after continuation: ""
	// reads from the beginning, FeedSince(t) from a time, any other value
	// must be a FeedPage.Continuation this store returned. One it cannot
	// resume from is ErrFeedGap. Latest-version mode, as Cosmos DB's:
	// hard deletes and TTL expiries never appear (package changefeed says
	// what that means for a reader).
	ChangeFeed(ctx context.Context, continuation string, maxItems int) (FeedPage, error)
	// Close releases the store's resources.
	Close() error
}

// CheckAddress applies the rules both stores enforce on a document's
// address (Cosmos DB's id rules plus NUL, which the embedded key layout
// reserves), so a caller holding a document from outside — a change-feed
// copy — can tell garbage that no store call will ever accept from a
// failure worth retrying. The error wraps ErrInvalid and names the field.
func CheckAddress(partitionKey, id string) error {
	switch {
	case partitionKey == "":
		return fmt.Errorf("%w: partitionKey is empty", ErrInvalid)
	case len(partitionKey) > MaxPartitionKeyBytes:
		return CheckPartitionKeySize(partitionKey)
	case strings.IndexByte(partitionKey, 0) >= 0:
		return fmt.Errorf("%w: partitionKey %q contains NUL", ErrInvalid, partitionKey)
	case id == "":
		return fmt.Errorf("%w: id is empty", ErrInvalid)
	case len(id) > MaxIDBytes:
		return fmt.Errorf("%w: id of %d bytes is longer than %d bytes", ErrInvalid, len(id), MaxIDBytes)
	case strings.ContainsAny(id, "/\\?#\x00"):
		return fmt.Errorf("%w: id %q contains one of / \\ ? # or NUL", ErrInvalid, id)
	}
	return nil
}
