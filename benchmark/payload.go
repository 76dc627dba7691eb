package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/functions/dispatchOperations"
)

// hostVersion is what the invocations claim to come from.
const hostVersion = "4.1036.1.1"

// envelope is the host's invocation body for a change-feed batch. The
// trigger hands the host the batch as one JSON string, which the host
// serializes again, and the envelope carries that as a string value: so
// Data.documents is a string holding a string holding the compact array.
// The benchmark keeps its own encoder so it does not lean on the local
// host's code.
func envelope(items []store.Item) ([]byte, error) {
	var arr bytes.Buffer
	arr.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			arr.WriteByte(',')
		}
		if err := json.Compact(&arr, it.Body); err != nil {
			return nil, fmt.Errorf("document %d is not JSON: %w", i, err)
		}
	}
	arr.WriteByte(']')
	once, err := jsonString(arr.Bytes())
	if err != nil {
		return nil, err
	}
	twice, err := jsonString(once)
	if err != nil {
		return nil, err
	}
	env := map[string]any{
		"Data": map[string]json.RawMessage{dispatchoperations.BindingName: twice},
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

// jsonString encodes s as a JSON string value, without HTML escaping.
func jsonString(s []byte) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(string(s)); err != nil {
		return nil, fmt.Errorf("encoding documents: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
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
