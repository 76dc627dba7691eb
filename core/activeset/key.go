package activeset

import (
	"bytes"
	"cmp"

	"github.com/hcpops/hcpops/core/document"
)

// key names a document inside its partition, exactly: the id's 16 bytes
// when it is a lower-case canonical UUID (every id ARO-HCP and hcpops
// write: operation names and CosmosID's), the id itself otherwise. The
// two never meet, since s is empty only for the first.
type key struct {
	u [16]byte
	s string
}

func keyOf(id string) key {
	var k key
	if !document.UUIDBytes(id, &k.u) {
		k.s = id
		k.u = [16]byte{}
	}
	return k
}

func compareKeys(a, b key) int {
	if c := bytes.Compare(a.u[:], b.u[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.s, b.s)
}

// id is the document id k names.
func (k key) id() string {
	if k.s != "" {
		return k.s
	}
	return document.UUIDString(k.u)
}

