package activeset

import (
	"bytes"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/hcpops/hcpops/core/document"
)

// head is what the view reads of a document: where it lives, when it was
// written and when it expires, its version, and for an operation what
// the active-operations query looks at.
type head struct {
	id, partitionKey, etag string
	ts                     int64 // _ts, seconds
	ttl                    int64 // seconds; 0 or below: never expires
	version                int64 // properties.cosmosMetadata.instanceVersion; 0 unknown
	deleted                bool  // deletionTimestamp is there at all (null included)

	operation  bool // resourceType is hcpOperationStatuses, any casing
	resource   bool // resourceType is a cluster's, node pool's or external auth's
	resourceID bool // resourceID is a non-empty string
	terminal   bool // properties.status is Succeeded, Failed or Canceled exactly
	notifyURI  bool // properties.notificationUri is a non-empty string
	externalID string
}

// class is what the active-operations query makes of a document:
// document.Classify, the one rule the stores and the Cosmos query text
// take too.
type class = document.Class

const (
	classNone    = document.ClassNone    // not selected
	classActive  = document.ClassActive  // non-terminal: polled, needs its resource
	classPending = document.ClassPending // terminal with a notification still to send
)

func (h *head) class() class {
	return document.Classify(document.Facts{
		Operation: h.operation, ResourceID: h.resourceID, Deleted: h.deleted, Terminal: h.terminal, NotifyURI: h.notifyURI,
	})
}

// expiry is the Unix second at which the store stops returning the
// document (_ts + ttl), 0 for never: Cosmos DB hides an expired document
// at once, before it deletes it, and never tells the change feed.
func (h *head) expiry() int64 {
	if h.ttl <= 0 || h.ts == 0 {
		return 0
	}
	return h.ts + h.ttl
}

var errNoAddress = errors.New("document has no string id and partitionKey")

// readHead reads the members the view needs and skips every other value
// without decoding it. Duplicate names are allowed (the last wins) and
// invalid UTF-8 is kept, so a document the stores hold is never refused
// here for what they accept. (Not core/document's restrict, which builds a
// tree and allocates several times as much: see
// docs/decisions/active-set-view.md#reading-a-documents-head.)
func readHead(body []byte) (head, error) {
	return newHeadReader().read(body)
}

// headReader reads heads with one decoder, reset for each document and
// reading from a bytes.Buffer, which jsontext parses in place rather than
// copying every document into a buffer of its own first.
type headReader struct {
	dec *jsontext.Decoder
}

var headOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

func newHeadReader() *headReader {
	return &headReader{dec: jsontext.NewDecoder(new(bytes.Buffer), headOptions...)}
}

// headReaders lends headReaders to the goroutines that read at once.
type headReaders struct{ pool sync.Pool }

func (p *headReaders) read(body []byte) (head, error) {
	hr, _ := p.pool.Get().(*headReader)
	if hr == nil {
		hr = newHeadReader()
	}
	defer p.pool.Put(hr)
	return hr.read(body)
}

func (hr *headReader) read(body []byte) (head, error) {
	var h head
	hr.dec.Reset(bytes.NewBuffer(body), headOptions...)
	dec := hr.dec
	err := eachMember(dec, func(name string) error {
		switch name {
		case "id":
			return readString(dec, &h.id)
		case "partitionKey":
			return readString(dec, &h.partitionKey)
		case "_etag":
			return readString(dec, &h.etag)
		case "_ts":
			return readInt(dec, &h.ts)
		case "ttl":
			return readInt(dec, &h.ttl)
		case "deletionTimestamp":
			h.deleted = true
			return dec.SkipValue()
		case "resourceType":
			var s string
			if err := readString(dec, &s); err != nil {
				return err
			}
			h.operation = document.IsOperationType(s)
			_, err := document.ResourceKind(s)
			h.resource = err == nil
			return nil
		case "resourceID":
			var s string
			err := readString(dec, &s)
			h.resourceID = s != ""
			return err
		case "properties":
			return h.readProperties(dec)
		}
		return dec.SkipValue()
	})
	if err != nil {
		return head{}, fmt.Errorf("reading document: %w", err)
	}
	if h.id == "" || h.partitionKey == "" {
		return head{}, errNoAddress
	}
	return h, nil
}

func (h *head) readProperties(dec *jsontext.Decoder) error {
	return eachMember(dec, func(name string) error {
		switch name {
		case "status":
			var s string
			if err := readString(dec, &s); err != nil {
				return err
			}
			h.terminal = document.TerminalStatus(s)
			return nil
		case "notificationUri":
			var s string
			err := readString(dec, &s)
			h.notifyURI = s != ""
			return err
		case "externalId":
			return readString(dec, &h.externalID)
		case "cosmosMetadata":
			return eachMember(dec, func(name string) error {
				if name == "instanceVersion" {
					return readInt(dec, &h.version)
				}
				return dec.SkipValue()
			})
		}
		return dec.SkipValue()
	})
}

// eachMember calls member with the name of each member of the object the
// decoder is at; member must consume the value. A value that is not an
// object is skipped: it has no members. Names are read as raw values and
// unquoted only when they hold an escape, so that skipping a member costs
// no allocation.
func eachMember(dec *jsontext.Decoder, member func(name string) error) error {
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := member(memberName(raw)); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// memberName is a raw quoted name as a string; the names the view reads
// are matched without allocating.
func memberName(raw jsontext.Value) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		if u, err := jsontext.AppendUnquote(nil, raw); err == nil {
			return string(u)
		}
	}
	for _, n := range headNames {
		if string(inner) == n { // compared in place, not converted
			return n
		}
	}
	return ""
}

// headNames are every member name readHead looks for.
var headNames = [...]string{"id", "partitionKey", "_etag", "_ts", "ttl", "deletionTimestamp", "resourceType",
	"resourceID", "properties", "status", "notificationUri", "externalId", "cosmosMetadata", "instanceVersion"}

// readString sets *s to a string value; any other value is skipped and
// leaves *s empty, as a query's IS_STRING would see it.
func readString(dec *jsontext.Decoder, s *string) error {
	*s = ""
	if dec.PeekKind() != '"' {
		return dec.SkipValue()
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	*s = tok.String()
	return nil
}

// readInt sets *n to a whole number value; anything else leaves it 0.
func readInt(dec *jsontext.Decoder, n *int64) error {
	*n = 0
	if dec.PeekKind() != '0' {
		return dec.SkipValue()
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		*n = i
	} else if f, err := strconv.ParseFloat(string(v), 64); err == nil && f == float64(int64(f)) {
		*n = int64(f)
	}
	return nil
}
