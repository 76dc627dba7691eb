package embedded

import "testing"

func TestRecordRoundTrip(t *testing.T) {
	in := record{flags: flagDeleted, seq: 7, created: 3, expires: 1773455462, etag: []byte(`"e"`), resourceID: []byte("/r"), body: []byte(`{"id":"a"}`)}
	out, err := decodeRecord(in.encode())
	if err != nil {
		t.Fatalf("decodeRecord: %v", err)
	}
	if out.flags != in.flags || out.seq != in.seq || out.created != in.created || out.expires != in.expires ||
		string(out.etag) != string(in.etag) || string(out.resourceID) != string(in.resourceID) || string(out.body) != string(in.body) {
		t.Errorf("round trip = %+v, want %+v", out, in)
	}
	for _, bad := range [][]byte{nil, in.encode()[:headerLen-1], append([]byte{9}, in.encode()[1:]...), in.encode()[:headerLen+1]} {
		if _, err := decodeRecord(bad); err == nil {
			t.Errorf("decodeRecord(%q) succeeded", bad)
		}
	}
}
