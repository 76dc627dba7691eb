package document

import (
	"bytes"
	"testing"
)

func TestPackUUIDs(t *testing.T) {
	for _, c := range []struct {
		in      string
		packed  int // UUIDs packed
		canPack bool
	}{
		{`{"id":"6e7906b8-195a-5089-af7d-ff5988327ebe"}`, 1, true},
		{`"\"00000000-0000-0097-0000-358f8edff2c3\""`, 1, true},
		{`/subscriptions/1d3378d3-5a3f-4712-85a1-2485495dfc4b/resourceGroups/rg-00003/x/6e7906b8-195a-5089-af7d-ff5988327ebe`, 2, true},
		{`6E7906B8-195A-5089-AF7D-FF5988327EBE upper case stays`, 0, true},
		{`2026-12-01T18:45:17Z rg-0-1 a-b-c-d-e`, 0, true},
		{`6e7906b8-195a-5089-af7d-ff5988327eb`, 0, true},                                       // one digit short
		{`6e7906b8-195a-5089-af7d-ff5988327ebe0`, 1, true},                                     // followed by more hex
		{`x6e7906b8-195a-5089-af7d-ff5988327ebe6e7906b8-195a-5089-af7d-ff5988327ebe`, 2, true}, // back to back
		{"with a \x01 raw", 0, false},
		{``, 0, true},
	} {
		if got := canPack([]byte(c.in)); got != c.canPack {
			t.Errorf("canPack(%q) = %v", c.in, got)
		}
		if !c.canPack {
			continue
		}
		p := packUUIDs(nil, []byte(c.in))
		if n := bytes.Count(p, []byte{uuidMark}); n < c.packed || len(p) != len(c.in)-19*c.packed {
			t.Errorf("pack(%q) = %q: %d bytes, want %d UUIDs packed", c.in, p, len(p), c.packed)
		}
		back, err := unpackUUIDs(p)
		if err != nil || string(back) != c.in {
			t.Errorf("unpack(pack(%q)) = %q, %v", c.in, back, err)
		}
	}
	if _, err := unpackUUIDs([]byte("cut \x01short")); err == nil {
		t.Error("unpacking a cut-short UUID succeeded")
	}
}

func FuzzPackUUIDs(f *testing.F) {
	f.Add([]byte(`{"id":"6e7906b8-195a-5089-af7d-ff5988327ebe","x":"-------"}`))
	f.Add([]byte(`00000000-0000-0000-0000-000000000000-00000000-0000-0000-0000-000000000000`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if !canPack(in) {
			return
		}
		back, err := unpackUUIDs(packUUIDs(nil, in))
		if err != nil || !bytes.Equal(back, in) {
			t.Fatalf("unpack(pack(%q)) = %q, %v", in, back, err)
		}
	})
}

// BenchmarkAppendUUID is one packed UUID written out, a dozen of which
// every operation a tick hands out costs.
func BenchmarkAppendUUID(b *testing.B) {
	raw := "\x6e\x79\x06\xb8\x19\x5a\x50\x89\xaf\x7d\xff\x59\x88\x32\x7e\xbe"
	buf := make([]byte, 0, uuidLen)
	for b.Loop() {
		buf = appendUUID(buf[:0], raw)
	}
	if string(buf) != "6e7906b8-195a-5089-af7d-ff5988327ebe" {
		b.Fatalf("wrote %q", buf)
	}
}
