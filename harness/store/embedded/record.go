package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/hcpops/hcpops/core/store"
)

// Bucket names. docs holds the records; the other three are indexes kept in
// step with it inside the same transaction.
var (
	bucketDocs   = []byte("docs")   // docKey -> record
	bucketOps    = []byte("ops")    // docKey -> operation class, for ActiveOperations
	bucketFeed   = []byte("feed")   // seq -> docKey, one entry per document at its latest write
	bucketExpiry = []byte("expiry") // expires|docKey -> nil, for the sweeper
	bucketMeta   = []byte("meta")
)

var (
	metaFormatKey = []byte("format")
	formatVersion = []byte("hcpops-embedded-1")
)

// docKey lays documents out partition by partition, so that a partition is
// one contiguous key range (ids and partition keys may not contain NUL).
func docKey(partitionKey, id string) []byte {
	k := make([]byte, 0, len(partitionKey)+1+len(id))
	k = append(k, partitionKey...)
	k = append(k, 0)
	return append(k, id...)
}

func partitionPrefix(partitionKey string) []byte {
	return append([]byte(partitionKey), 0)
}

func seqKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq)
}

func expiryKey(expires int64, key []byte) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(key)), uint64(expires))
	return append(k, key...)
}

func expiryOf(expiryKey []byte) int64 {
	return int64(binary.BigEndian.Uint64(expiryKey))
}

const flagDeleted = 1

// record is a stored document with the metadata the store needs without
// parsing JSON: its etag, feed position, expiry and resourceID.
type record struct {
	flags      byte
	seq        uint64 // feed position of this version
	created    uint64 // feed position of the create; names the document (_rid)
	expires    int64  // unix seconds; 0 means never
	etag       []byte
	resourceID []byte
	body       []byte
}

const (
	recordVersion = 1
	headerLen     = 1 + 1 + 8 + 8 + 8
)

func (r record) encode() []byte {
	buf := make([]byte, 0, headerLen+2*binary.MaxVarintLen64+len(r.etag)+len(r.resourceID)+len(r.body))
	buf = append(buf, recordVersion, r.flags)
	buf = binary.BigEndian.AppendUint64(buf, r.seq)
	buf = binary.BigEndian.AppendUint64(buf, r.created)
	buf = binary.BigEndian.AppendUint64(buf, uint64(r.expires))
	buf = binary.AppendUvarint(buf, uint64(len(r.etag)))
	buf = append(buf, r.etag...)
	buf = binary.AppendUvarint(buf, uint64(len(r.resourceID)))
	buf = append(buf, r.resourceID...)
	return append(buf, r.body...)
}

// decodeRecord aliases v: its slices are valid only inside the transaction.
func decodeRecord(v []byte) (record, error) {
	var r record
	if len(v) < headerLen || v[0] != recordVersion {
		return r, errors.New("corrupt record header")
	}
	r.flags = v[1]
	r.seq = binary.BigEndian.Uint64(v[2:])
	r.created = binary.BigEndian.Uint64(v[10:])
	r.expires = int64(binary.BigEndian.Uint64(v[18:]))
	rest := v[headerLen:]
	var ok bool
	if r.etag, rest, ok = lengthPrefixed(rest); !ok {
		return r, errors.New("corrupt record etag")
	}
	if r.resourceID, rest, ok = lengthPrefixed(rest); !ok {
		return r, errors.New("corrupt record resourceID")
	}
	r.body = rest
	return r, nil
}

func lengthPrefixed(b []byte) (field, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || uint64(len(b)-w) < n {
		return nil, nil, false
	}
	return b[w : w+int(n)], b[w+int(n):], true
}

// A record is a storedoc.Version.

func (r record) Expired(now int64) bool {
	return r.expires != 0 && now >= r.expires
}

func (r record) deleted() bool { return r.flags&flagDeleted != 0 }

func (r record) Visible(now int64) bool { return !r.Expired(now) && !r.deleted() }

func (r record) HasETag(etag string) bool { return string(r.etag) == etag }

func (r record) ETag() string { return string(r.etag) }

// Body aliases bbolt's memory, as the record does.
func (r record) Body() []byte { return r.body }

func formatContinuation(seq uint64) string { return strconv.FormatUint(seq, 10) }

func parseContinuation(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w (%w): continuation %q is not one this store issued", store.ErrFeedGap, store.ErrInvalid, s)
	}
	return seq, nil
}

func uint64FromKey(k []byte) uint64 { return binary.BigEndian.Uint64(k) }
