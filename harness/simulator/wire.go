package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	ocmerrors "github.com/openshift-online/ocm-sdk-go/errors"

	"github.com/hcpops/hcpops/core/clusterservice"
)

const maxBodyBytes = 1 << 20

// writeJSON sends a body with the content type the SDK insists on.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeObject marshals obj with the SDK's own writer, so the JSON is exactly
// what CS would send.
func writeObject[T any](s *Simulator, w http.ResponseWriter, r *http.Request, status int, obj T,
	marshal func(T, io.Writer) error) {
	var buf bytes.Buffer
	if err := marshal(obj, &buf); err != nil {
		s.writeError(w, r, http.StatusInternalServerError, fmt.Sprintf("Can't marshal response: %v", err))
		return
	}
	writeJSON(w, status, buf.Bytes())
}

// writeList sends the {kind,page,size,total,items} envelope CS wraps every
// collection in; the SDK's list writers only produce the bare array.
func writeList[T any](s *Simulator, w http.ResponseWriter, r *http.Request, kind string, page, total int,
	items []T, marshal func([]T, io.Writer) error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"kind":%q,"page":%d,"size":%d,"total":%d,"items":`, kind, page, len(items), total)
	if err := marshal(items, &buf); err != nil {
		s.writeError(w, r, http.StatusInternalServerError, fmt.Sprintf("Can't marshal response: %v", err))
		return
	}
	buf.WriteByte('}')
	writeJSON(w, http.StatusOK, buf.Bytes())
}

// writeError sends a CS error body: the SDK returns no error at all for an
// error status with an empty body, so every 4xx/5xx carries one.
func (s *Simulator) writeError(w http.ResponseWriter, r *http.Request, status int, reason string) {
	opID := s.newUUID()
	prefix := clusterservice.AroHCPPrefix
	if strings.HasPrefix(r.URL.Path, clusterservice.ClustersMgmtPrefix) {
		prefix = clusterservice.ClustersMgmtPrefix
	}
	n := strconv.Itoa(status)
	e, err := ocmerrors.NewError().
		ID(n).
		HREF(prefix + "/errors/" + n).
		Code("CLUSTERS-MGMT-" + n).
		Reason(reason).
		OperationID(opID).
		Build()
	var buf bytes.Buffer
	if err == nil {
		err = ocmerrors.MarshalError(e, &buf)
	}
	if err != nil {
		buf.Reset()
		fmt.Fprintf(&buf, `{"kind":"Error","id":%q,"code":%q,"reason":%q}`, n, "CLUSTERS-MGMT-"+n, reason)
	}
	w.Header().Set("X-Operation-Id", opID)
	writeJSON(w, status, buf.Bytes())
}

func (s *Simulator) notFound(w http.ResponseWriter, r *http.Request, format string, args ...any) {
	s.writeError(w, r, http.StatusNotFound, fmt.Sprintf(format, args...))
}

func (s *Simulator) badRequest(w http.ResponseWriter, r *http.Request, format string, args ...any) {
	s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf(format, args...))
}

// readBody reads a bounded request body; an empty body is an error unless
// optional.
func readBody(r *http.Request, optional bool) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("can't read request body: %w", err)
	}
	if len(data) > maxBodyBytes {
		return nil, fmt.Errorf("request body is larger than %d bytes", maxBodyBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 && !optional {
		return nil, errors.New("request body is empty")
	}
	return data, nil
}

// decode checks the body is one JSON object (the SDK's jsoniter reader
// tolerates trailing garbage) and then parses it with an SDK reader, which
// rejects wrongly typed fields.
func decode[T any](data []byte, unmarshal func(any) (T, error)) (T, error) {
	var zero T
	if !json.Valid(data) {
		return zero, errors.New("request body is not valid JSON")
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || trimmed[0] != '{' {
		return zero, errors.New("request body is not a JSON object")
	}
	v, err := unmarshal(data)
	if err != nil {
		return zero, fmt.Errorf("request body does not match the schema: %w", err)
	}
	return v, nil
}

// paging reads the page and size query parameters CS lists accept.
func (s *Simulator) paging(r *http.Request) (page, size int, err error) {
	page, size = 1, s.pageSize
	if v := r.URL.Query().Get("page"); v != "" {
		page, err = strconv.Atoi(v)
		if err != nil || page < 1 {
			return 0, 0, fmt.Errorf("parameter 'page' must be a positive integer, got %q", v)
		}
	}
	if v := r.URL.Query().Get("size"); v != "" {
		size, err = strconv.Atoi(v)
		if err != nil || size < 1 {
			return 0, 0, fmt.Errorf("parameter 'size' must be a positive integer, got %q", v)
		}
	}
	return page, size, nil
}

// pageOf returns the slice of items on a one-based page.
func pageOf[T any](items []T, page, size int) []T {
	start := (page - 1) * size
	if start >= len(items) {
		return []T{}
	}
	return items[start:min(start+size, len(items))]
}

// idAlphabet is the lower-case base32 alphabet CS uses for its IDs.
const idAlphabet = "0123456789abcdefghijklmnopqrstuv"

// newID draws a 32-character CS-style ID from the seeded source.
func (s *Simulator) newID() string {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	b := make([]byte, 32)
	for i := range b {
		b[i] = idAlphabet[s.rng.IntN(len(idAlphabet))]
	}
	return string(b)
}

// newUUID draws a version-4 UUID from the seeded source.
func (s *Simulator) newUUID() string {
	s.rngMu.Lock()
	var u uuid.UUID
	for i := range u {
		u[i] = byte(s.rng.Uint32())
	}
	s.rngMu.Unlock()
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}

// float draws a number in [0,1) from the seeded source.
func (s *Simulator) float() float64 {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64()
}
