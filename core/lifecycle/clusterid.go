package lifecycle

import (
	"encoding/base32"
	"fmt"
	"io"
	"strings"
)

// clusterIDEncoding is base32hex in lower case: the alphabet [0-9a-v] of
// the KSUID-like IDs ARO-HCP chooses for CS clusters.
var clusterIDEncoding = base32.HexEncoding.WithPadding(base32.NoPadding)

// newClusterID returns 32 characters of [0-9a-v] (160 random bits).
func (e *Engine) newClusterID() (string, error) {
	var b [20]byte
	if _, err := io.ReadFull(e.random, b[:]); err != nil {
		return "", fmt.Errorf("generating a cluster ID: %w", err)
	}
	return strings.ToLower(clusterIDEncoding.EncodeToString(b[:])), nil
}
