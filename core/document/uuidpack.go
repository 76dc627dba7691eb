package document

import (
	"bytes"
	"fmt"
	"strings"
)

// UUID packing, for the strings of a projection (projection.go): ids,
// subscriptions and etags are most of what tells one document from
// another, and the view compresses what is left against what documents
// share. Each lower-case canonical UUID
// (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) becomes uuidMark and its 16
// bytes: 36 bytes that no compressor shrinks below 18 become 17. A string
// holding the byte uuidMark is not packed (canPack), so unpacking gives
// back exactly the bytes packed.

const (
	uuidMark = 0x01
	uuidLen  = 36
)

// pairs are where a UUID's 16 bytes are, as hex digit pairs.
var pairs = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexValue is a lower-case hex digit's value, or 0xff.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := byte(0); i < 10; i++ {
		t['0'+i] = i
	}
	for i := byte(0); i < 6; i++ {
		t['a'+i] = 10 + i
	}
	return t
}()

const hexDigits = "0123456789abcdef"

func canPack[S string | []byte](body S) bool {
	switch b := any(body).(type) {
	case string:
		return strings.IndexByte(b, uuidMark) < 0
	case []byte:
		return bytes.IndexByte(b, uuidMark) < 0
	}
	return false
}

// uuidAt decodes the UUID at the start of s into raw, if one is there.
func uuidAt[S string | []byte](s S, raw *[16]byte) bool {
	if len(s) < uuidLen || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	for n, i := range pairs {
		hi, lo := hexValue[s[i]], hexValue[s[i+1]]
		if hi|lo == 0xff {
			return false
		}
		raw[n] = hi<<4 | lo
	}
	return true
}

// packUUIDs appends src to dst with its UUIDs packed. A UUID has no dash
// in its first 8 bytes, so each dash found is either 8 bytes into one or
// in none that starts before it.
func packUUIDs[S string | []byte](dst []byte, src S) []byte {
	var raw [16]byte
	for {
		p := indexDash(src)
		if p < 0 {
			return append(dst, src...)
		}
		if p >= 8 && uuidAt(src[p-8:], &raw) {
			dst = append(dst, src[:p-8]...)
			dst = append(dst, uuidMark)
			dst = append(dst, raw[:]...)
			src = src[p-8+uuidLen:]
			continue
		}
		dst = append(dst, src[:p+1]...)
		src = src[p+1:]
	}
}

// unpackUUIDs writes packed UUIDs out again.
func unpackUUIDs(src []byte) ([]byte, error) {
	return appendUnpacked(nil, string(src))
}

func indexDash[S string | []byte](s S) int {
	switch s := any(s).(type) {
	case string:
		return strings.IndexByte(s, '-')
	case []byte:
		return bytes.IndexByte(s, '-')
	}
	return -1
}

// UUIDBytes sets *raw to the 16 bytes of s when s is exactly one
// lower-case canonical UUID, and says whether it was.
func UUIDBytes(s string, raw *[16]byte) bool {
	return len(s) == uuidLen && uuidAt(s, raw)
}

// hexPairs are each byte's two lower-case hex digits.
var hexPairs = func() (t [256][2]byte) {
	for i := range t {
		t[i] = [2]byte{hexDigits[i>>4], hexDigits[i&0xf]}
	}
	return t
}()

// appendUnpacked appends src (a packed string) to dst with its UUIDs
// written out again, as unpackUUIDs does. Every tick unpacks a dozen UUIDs
// an operation, so each is written in place, a digit pair at a time.
func appendUnpacked(dst []byte, src string) ([]byte, error) {
	for {
		m := strings.IndexByte(src, uuidMark)
		if m < 0 {
			return append(dst, src...), nil
		}
		if m+17 > len(src) {
			return dst, fmt.Errorf("a packed UUID is cut short")
		}
		dst = append(dst, src[:m]...)
		dst = appendUUID(dst, src[m+1:m+17])
		src = src[m+17:]
	}
}

// appendUUID appends the canonical form of raw, 16 bytes. It is written
// out digit pair by digit pair: with constant offsets the compiler checks
// no bounds, where a loop over pairs checks every write
// (BenchmarkAppendUUID; docs/decisions/active-set-view.md#writing-out-a-uuid).
func appendUUID(dst []byte, raw string) []byte {
	n := len(dst)
	dst = append(dst, "________-____-____-____-____________"...)
	u := (*[uuidLen]byte)(dst[n:])
	r := raw[:16]
	put := func(i int, c byte) { p := hexPairs[c]; u[i], u[i+1] = p[0], p[1] }
	put(0, r[0])
	put(2, r[1])
	put(4, r[2])
	put(6, r[3])
	u[8] = '-'
	put(9, r[4])
	put(11, r[5])
	u[13] = '-'
	put(14, r[6])
	put(16, r[7])
	u[18] = '-'
	put(19, r[8])
	put(21, r[9])
	u[23] = '-'
	put(24, r[10])
	put(26, r[11])
	put(28, r[12])
	put(30, r[13])
	put(32, r[14])
	put(34, r[15])
	return dst
}
