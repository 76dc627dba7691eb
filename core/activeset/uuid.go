package activeset

import (
	"bytes"
	"fmt"
)

// UUID packing: the one transform of its own the view's compression makes
// (record.go says why). Each lower-case canonical UUID
// (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) becomes uuidMark and its 16
// bytes. JSON text never holds the byte uuidMark raw (a control character
// in a string must be escaped, and outside strings only whitespace may
// stand), and a document that holds one anyway is not packed (canPack), so
// unpacking gives back exactly the bytes packed.

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

func canPack(body []byte) bool { return bytes.IndexByte(body, uuidMark) < 0 }

// uuidAt decodes the UUID at the start of s into raw, if one is there.
func uuidAt(s []byte, raw *[16]byte) bool {
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
func packUUIDs(dst, src []byte) []byte {
	var raw [16]byte
	for {
		p := bytes.IndexByte(src, '-')
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
	out := make([]byte, 0, len(src)+len(src)/2)
	for {
		m := bytes.IndexByte(src, uuidMark)
		if m < 0 {
			return append(out, src...), nil
		}
		if m+17 > len(src) {
			return nil, fmt.Errorf("a held document's packed UUID is cut short")
		}
		out = append(out, src[:m]...)
		u := [uuidLen]byte{8: '-', 13: '-', 18: '-', 23: '-'}
		for n, i := range pairs {
			b := src[m+1+n]
			u[i], u[i+1] = hexDigits[b>>4], hexDigits[b&0xf]
		}
		out = append(out, u[:]...)
		src = src[m+17:]
	}
}
