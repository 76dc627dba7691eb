package storedoc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

func TestParseDocumentErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // in the message
	}{
		{"not an object", `[1]`, "not a JSON object"},
		{"no id", `{"partitionKey":"p"}`, "no field id"},
		{"id not a string", `{"id":7,"partitionKey":"p"}`, "field id is 7"},
		{"empty id", `{"id":"","partitionKey":"p"}`, "id is empty"},
		{"id with slash", `{"id":"a/b","partitionKey":"p"}`, `"a/b"`},
		{"no partitionKey", `{"id":"a"}`, "partitionKey is undefined"},
		{"other partitionKey", `{"id":"a","partitionKey":"q"}`, `partitionKey is "q", want "p"`},
		{"ttl zero", `{"id":"a","partitionKey":"p","ttl":0}`, "ttl is 0"},
		{"ttl fraction", `{"id":"a","partitionKey":"p","ttl":1.5}`, "ttl is 1.5"},
		{"ttl string", `{"id":"a","partitionKey":"p","ttl":"30"}`, `ttl is "30"`},
		{"ttl below -1", `{"id":"a","partitionKey":"p","ttl":-2}`, "ttl is -2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.body), "p")
			if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalid mentioning %q", err, tc.want)
			}
		})
	}
}

func TestParseDocumentTTL(t *testing.T) {
	for body, want := range map[string]int64{
		`{"id":"a","partitionKey":"p"}`:              0,
		`{"id":"a","partitionKey":"p","ttl":null}`:   0,
		`{"id":"a","partitionKey":"p","ttl":-1}`:     -1,
		`{"id":"a","partitionKey":"p","ttl":30}`:     30,
		`{"id":"a","partitionKey":"p","ttl":30.0}`:   30,
		`{"id":"a","partitionKey":"p","ttl":604800}`: 604800,
	} {
		_, meta, err := Parse([]byte(body), "p")
		if err != nil || meta.TTL != want {
			t.Errorf("Parse(%s): ttl %d, err %v; want %d", body, meta.TTL, err, want)
		}
	}
}

// TestParseClassifies: Parse indexes a document by document.ClassifyObject
// (whose cases are tested there), after dropping the system fields.
func TestParseClassifies(t *testing.T) {
	op := `{"id":"a","partitionKey":"p","resourceID":"/x","resourceType":"Microsoft.RedHatOpenShift/hcpOperationStatuses","_etag":"e"`
	for body, want := range map[string]document.Class{
		op + `,"properties":{"status":"Accepted"}}`:                               document.ClassActive,
		op + `,"properties":{"status":"Failed","notificationUri":"https://a/b"}}`: document.ClassPending,
		op + `,"properties":{"status":"Failed"}}`:                                 document.ClassNone,
		`{"id":"a","partitionKey":"p","resourceID":"/x","resourceType":"c"}`:      document.ClassNone,
	} {
		if _, meta, err := Parse([]byte(body), "p"); err != nil || meta.Class != want {
			t.Errorf("Parse(%s): class %d, err %v; want %d", body, meta.Class, err, want)
		}
	}
}

// TestSoftDeletedRefusesWhatItCannotEdit: document.Object.MarkDeleted's
// refusal (tested there) is the store's ErrInvalid.
func TestSoftDeletedRefusesWhatItCannotEdit(t *testing.T) {
	_, _, err := softDeleted([]byte(`{"id":"a","partitionKey":"p","properties":[]}`), "p", time.Now())
	if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "field properties is []") {
		t.Errorf("err = %v, want ErrInvalid naming properties", err)
	}
	obj, meta, err := softDeleted([]byte(`{"id":"a","partitionKey":"p","properties":{}}`), "p", time.Now())
	if ttl, _ := obj.Get("ttl"); err != nil || !meta.Deleted || string(ttl) != "30" {
		t.Errorf("softDeleted = %s, %+v, %v; want deleted with ttl 30", obj.AppendJSON(nil), meta, err)
	}
}

func TestHasPrefixFold(t *testing.T) {
	tests := []struct {
		s, prefix string
		want      bool
	}{
		{"/Subscriptions/S/RG/np", "/subscriptions/s/rg/", true},
		{"/subscriptions/s/rg", "/subscriptions/s/rg/", false},
		{"/subscriptions/s/rg2/x", "/subscriptions/s/rg/", false},
		{"/x/\u212a/y", "/X/k/", true}, // Kelvin sign folds to k
		{"", "/", false},
		{"anything", "", true},
	}
	for _, tc := range tests {
		if got := HasPrefixFold([]byte(tc.s), tc.prefix); got != tc.want {
			t.Errorf("HasPrefixFold(%q, %q) = %v, want %v", tc.s, tc.prefix, got, tc.want)
		}
	}
}
