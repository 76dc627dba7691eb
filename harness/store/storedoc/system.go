package storedoc

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// System is what a store writes into the fields it owns.
type System struct {
	// Seq is the write's position in the store's change feed; it makes
	// the etag, which no other write of the store shares.
	Seq uint64
	// Created is the position of the document's create; it names the
	// document (_rid, _self) for its whole life.
	Created uint64
	// Now is the write's time (_ts, in whole seconds as Cosmos DB's).
	Now time.Time
}

// ETag is the quoted, Cosmos-looking etag of the write.
func (s System) ETag() string {
	return fmt.Sprintf(`"%08x-%04x-%04x-0000-%012x"`,
		uint32(s.Seq>>32), uint16(s.Seq>>16), uint16(s.Seq), uint64(s.Now.UnixNano())&0xffffffffffff)
}

// RID is the document's _rid.
func (s System) RID() string {
	return base64.URLEncoding.EncodeToString(binary.BigEndian.AppendUint64(make([]byte, 0, 8), s.Created))
}

// Stamp writes the system fields into obj, last, and returns the body as
// stored with its etag.
func Stamp(obj document.Object, s System) (body []byte, etag string) {
	etag = s.ETag()
	rid := s.RID()
	etagJSON, _ := json.Marshal(etag) // a string always marshals
	obj.Set("_rid", json.RawMessage(strconv.Quote(rid)))
	obj.Set("_self", json.RawMessage(strconv.Quote("dbs/hcpops/colls/Resources/docs/"+rid+"/")))
	obj.Set("_etag", etagJSON)
	obj.Set("_attachments", json.RawMessage(`"attachments/"`))
	obj.Set("_ts", json.RawMessage(strconv.FormatInt(s.Now.Unix(), 10)))
	return obj.AppendJSON(make([]byte, 0, obj.Size())), etag
}

// DefaultPageSize bounds one page of a streamed query or the change feed
// when the caller leaves the size to the store.
const DefaultPageSize = 100

// PageSize is a caller's page size checked, 0 meaning DefaultPageSize.
func PageSize(n int) (int, error) {
	if err := store.CheckPageSize("page size", n); err != nil {
		return 0, err
	}
	if n == 0 {
		return DefaultPageSize, nil
	}
	return n, nil
}

// HasPrefixFold is strings.HasPrefix under Unicode simple case folding,
// which is how STARTSWITH(..., true) compares (Children).
func HasPrefixFold(s []byte, prefix string) bool {
	for prefix != "" {
		if len(s) == 0 {
			return false
		}
		r1, n1 := utf8.DecodeRune(s)
		r2, n2 := utf8.DecodeRuneInString(prefix)
		if !equalFoldRune(r1, r2) {
			return false
		}
		s, prefix = s[n1:], prefix[n2:]
	}
	return true
}

func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	if a < utf8.RuneSelf && b < utf8.RuneSelf {
		return 'A' <= a && a <= 'Z' && a+'a'-'A' == b || 'A' <= b && b <= 'Z' && b+'a'-'A' == a
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}
