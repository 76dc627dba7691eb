package store

import (
	"bytes"
	"encoding/json/jsontext"
	"fmt"
)

// Limits Cosmos DB enforces (its service quotas), which every store
// enforces the same way: a document the embedded store takes is one Cosmos
// takes too, and one it refuses is refused at the write with a clear
// ErrInvalid, not met later as a stuck change feed. The local
// Cosmos-compatible test server enforces none of them.
const (
	// MaxDocumentBytes is Cosmos DB's item size limit, 2 MB, counted on
	// the JSON the caller writes.
	MaxDocumentBytes = 2 << 20
	// MaxPartitionKeyBytes is the partition key value limit of a container
	// with large partition keys (version 2), as ARO-HCP's are.
	MaxPartitionKeyBytes = 2048
	// MaxIDBytes is the limit on a document id.
	MaxIDBytes = 255
	// MaxBatchOps and MaxBatchBytes bound one transactional batch: 100
	// operations, 2 MB of payload.
	MaxBatchOps   = 100
	MaxBatchBytes = 2 << 20
	// MaxPageSize bounds the page size a caller asks of a query or the
	// change feed: a page is built in memory, so the size a caller sends
	// is work it asks for. Far above any caller here (a tick pages 100).
	MaxPageSize = 10000
)

// CheckPartitionKeySize refuses a partition key value over Cosmos DB's
// limit; the error gives its length, not its bytes.
func CheckPartitionKeySize(pk string) error {
	if len(pk) > MaxPartitionKeyBytes {
		return fmt.Errorf("%w: partition key is %d bytes, over Cosmos DB's limit of %d bytes", ErrInvalid, len(pk), MaxPartitionKeyBytes)
	}
	return nil
}

// CheckDocumentSize refuses a document over Cosmos DB's item limit,
// naming its id when the document says it early enough to find cheaply.
func CheckDocumentSize(doc []byte) error {
	if len(doc) <= MaxDocumentBytes {
		return nil
	}
	return fmt.Errorf("%w: document %s is %d bytes, over Cosmos DB's item limit of %d bytes (2 MB)",
		ErrInvalid, describeID(TopLevelID(doc)), len(doc), MaxDocumentBytes)
}

// CheckBatch checks a batch's size against Cosmos DB's limits before any
// step runs: 1 to MaxBatchOps steps, MaxBatchBytes of bodies in all, each
// body within MaxDocumentBytes.
func CheckBatch(ops []BatchOp) error {
	if len(ops) == 0 || len(ops) > MaxBatchOps {
		return fmt.Errorf("%w: %d steps, Cosmos DB takes 1 to %d", ErrInvalid, len(ops), MaxBatchOps)
	}
	total := 0
	for i, op := range ops {
		if err := CheckDocumentSize(op.Body); err != nil {
			id := op.ID
			if id == "" {
				id = TopLevelID(op.Body)
			}
			return &BatchError{Index: i, Op: op.Kind, ID: id, Err: err}
		}
		total += len(op.Body)
	}
	if total > MaxBatchBytes {
		return fmt.Errorf("%w: the batch's documents are %d bytes in all, over Cosmos DB's transactional batch limit of %d bytes (2 MB)",
			ErrInvalid, total, MaxBatchBytes)
	}
	return nil
}

// CheckPageSize refuses a page size (named by field) below 0 or over
// MaxPageSize; 0 means the store's default.
func CheckPageSize(field string, n int) error {
	if n < 0 || n > MaxPageSize {
		return fmt.Errorf("%w: %s is %d, want 0 (the default) to %d", ErrInvalid, field, n, MaxPageSize)
	}
	return nil
}

// TopLevelID is the document's top-level "id" string, read without
// decoding the rest: it stops at the id, or at the first thing that is not
// a well-formed JSON object member. "" when there is none.
func TopLevelID(doc []byte) string {
	d := jsontext.NewDecoder(bytes.NewReader(doc))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for {
		name, err := d.ReadToken()
		if err != nil || name.Kind() != '"' {
			return ""
		}
		if name.String() != "id" {
			if err := d.SkipValue(); err != nil {
				return ""
			}
			continue
		}
		v, err := d.ReadToken()
		if err != nil || v.Kind() != '"' {
			return ""
		}
		return v.String()
	}
}

func describeID(id string) string {
	if id == "" || len(id) > MaxIDBytes {
		return "(no readable id)"
	}
	return fmt.Sprintf("%q", id)
}

// KeyLabel is a partition key as error messages show it: itself, or its
// length when it is too long to be one (an error must not echo 70 KB).
func KeyLabel(pk string) string {
	if len(pk) > MaxPartitionKeyBytes {
		return fmt.Sprintf("(a %d-byte partition key)", len(pk))
	}
	return pk
}
