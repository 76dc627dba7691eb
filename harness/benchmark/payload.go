package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/store"
	dispatchoperations "github.com/hcpops/hcpops/functions/dispatchOperations"
	"github.com/hcpops/hcpops/harness/devhost/triggerhost"
)

// hostVersion is what the invocations claim to come from.
const hostVersion = "4.1036.1.1"

// envelope is the host's invocation body for a change-feed batch, with
// Data.documents double-encoded exactly as the local trigger host sends it
// (triggerhost.EncodeDocuments), so the benchmark measures the same payload.
func envelope(items []store.Item) ([]byte, error) {
	docs, err := triggerhost.EncodeDocuments(items)
	if err != nil {
		return nil, fmt.Errorf("encoding the change-feed batch: %w", err)
	}
	env := map[string]any{
		"Data": map[string]json.RawMessage{dispatchoperations.BindingName: docs},
		"Metadata": map[string]any{"sys": map[string]string{
			"MethodName": dispatchoperations.Name,
			"UtcNow":     time.Now().UTC().Format(time.RFC3339Nano),
			"RandGuid":   uuid.NewString(),
		}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the host (Newtonsoft) does not escape <, > and &
	if err := enc.Encode(env); err != nil {
		return nil, fmt.Errorf("encoding the invocation: %w", err)
	}
	return b.Bytes(), nil
}

// freePort asks the kernel for a loopback port nobody holds right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
