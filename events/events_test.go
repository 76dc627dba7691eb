package events

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRetryContext(t *testing.T) {
	tests := []struct {
		name    string
		meta    string
		want    *RetryContext
		wantErr string
	}{
		{"absent", `{}`, nil, ""},
		{"null", `{"RetryContext":null}`, nil, ""},
		{"object", `{"RetryContext":{"RetryCount":2,"MaxRetryCount":5,"Exception":null}}`, &RetryContext{RetryCount: 2, MaxRetryCount: 5, Exception: json.RawMessage("null")}, ""},
		{"string-encoded", `{"RetryContext":"{\"RetryCount\":1,\"MaxRetryCount\":3}"}`, &RetryContext{RetryCount: 1, MaxRetryCount: 3}, ""},
		{"array", `{"RetryContext":[1]}`, nil, "got array"},
		{"wrong type", `{"RetryContext":{"RetryCount":"two"}}`, nil, "RetryContext"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inv InvokeRequest
			if err := json.Unmarshal([]byte(tt.meta), &inv.Metadata); err != nil {
				t.Fatal(err)
			}
			got, err := inv.RetryContext()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !IsMalformed(err) {
					t.Fatalf("err = %v, want bad input containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tt.want == nil) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if got != nil && (got.RetryCount != tt.want.RetryCount || got.MaxRetryCount != tt.want.MaxRetryCount || string(got.Exception) != string(tt.want.Exception)) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestKind(t *testing.T) {
	for raw, want := range map[string]string{
		`{}`: "object", ` [1]`: "array", `"s"`: "string", `-1`: "number", `3`: "number", //nolint:gocritic // mapKey: the space before [1] is the case

		`true`: "boolean", `false`: "boolean", `null`: "null", ``: "", "\n\t": "",
	} {
		if got := Kind(json.RawMessage(raw)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", raw, got, want)
		}
	}
	for raw, want := range map[string]string{
		`{}`: "an object", `[]`: "an array", `"s"`: "a string", `1`: "a number", `true`: "a boolean", `null`: "null", ``: "nothing",
	} {
		if got := Describe(json.RawMessage(raw)); got != want {
			t.Errorf("Describe(%q) = %q, want %q", raw, got, want)
		}
	}
}
