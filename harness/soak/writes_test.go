package soak

import (
	"strings"
	"testing"
)

func TestCheckVersions(t *testing.T) {
	k := docKey{pk: "p", id: "d"}
	v := func(version int64, etag string) docVersion {
		return docVersion{key: k, resource: "/r/d", etag: etag, version: version}
	}
	create := func(version int64, etag string) write { return write{kind: writeCreate, doc: v(version, etag)} }
	replace := func(version int64, etag string) write { return write{kind: writeReplace, doc: v(version, etag)} }
	softDelete := func(version int64, etag string) write {
		w := replace(version, etag)
		w.doc.deleted = true
		return w
	}
	del := write{kind: writeDelete, doc: docVersion{key: k}}
	found := func(version int64, etag string) map[docKey]finalRead {
		return map[docKey]finalRead{k: {found: true, doc: v(version, etag)}}
	}
	gone := map[docKey]finalRead{k: {}}
	tests := []struct {
		name     string
		writes   []write
		observed []docVersion
		final    map[docKey]finalRead
		want     string // "" means no problem
	}{
		{"clean history", []write{create(1, "a"), replace(2, "b"), replace(3, "c")}, []docVersion{v(1, "a"), v(3, "c")}, found(3, "c"), ""},
		{"soft-deleted and gone", []write{create(1, "a"), softDelete(2, "b")}, nil, gone, ""},
		{"deleted and created again", []write{create(1, "a"), replace(2, "b"), del, create(1, "c")}, []docVersion{v(2, "b"), v(1, "c")}, found(1, "c"), ""},
		{"a version written twice", []write{create(1, "a"), replace(2, "b"), replace(2, "c")}, nil, nil, "instanceVersion 2 written more than once: a stomped update"},
		{"a version skipped", []write{create(1, "a"), replace(3, "b")}, nil, nil, "instanceVersion 3 where 2 was due"},
		{"written before any create", []write{replace(2, "b")}, nil, nil, "no acknowledged create before it"},
		{"final read behind the last write", []write{create(1, "a"), replace(2, "b")}, nil, found(1, "a"), "final read is version 1 etag a, but the last acknowledged write was version 2 etag b"},
		{"final read with another etag", []write{create(1, "a"), replace(2, "b")}, nil, found(2, "x"), "final read is version 2 etag x"},
		{"gone without a delete", []write{create(1, "a"), replace(2, "b")}, nil, gone, "gone at the end, yet its last acknowledged write (version 2) was no delete"},
		{"readable after a delete", []write{create(1, "a"), del}, nil, found(1, "a"), "still readable (version 1) after its delete"},
		{"feed shows an unacknowledged version", []write{create(1, "a")}, []docVersion{v(1, "a"), v(2, "z")}, nil, "the change feed showed version 2 etag z, which no acknowledged write produced"},
		{"feed goes backwards", []write{create(1, "a"), replace(2, "b")}, []docVersion{v(2, "b"), v(1, "a")}, nil, "the change feed showed version 1 after version 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			observed := map[docKey][]docVersion{}
			if tc.observed != nil {
				observed[k] = tc.observed
			}
			problems := checkVersions(map[docKey][]write{k: tc.writes}, observed, tc.final)
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("problems %q, want none", problems)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)):
				t.Errorf("problems %q, want one saying %q", problems, tc.want)
			case tc.want != "" && !strings.Contains(problems[0], "/r/d"):
				t.Errorf("problem %q does not name the resource", problems[0])
			}
		})
	}
}

func TestReadVersion(t *testing.T) {
	tests := []struct {
		name, body string
		want       docVersion
		err        string
	}{
		{"current", `{"id":"d","partitionKey":"p","resourceID":"/r","_etag":"e","properties":{"cosmosMetadata":{"instanceVersion":7}}}`,
			docVersion{key: docKey{"p", "d"}, resource: "/r", etag: "e", version: 7}, ""},
		{"legacy without instanceVersion", `{"id":"d","partitionKey":"p","_etag":"e","properties":{}}`,
			docVersion{key: docKey{"p", "d"}, etag: "e", version: 1}, ""},
		{"soft-deleted", `{"id":"d","partitionKey":"p","deletionTimestamp":"2026-01-01T00:00:00Z","properties":{"cosmosMetadata":{"instanceVersion":2}}}`,
			docVersion{key: docKey{"p", "d"}, version: 2, deleted: true}, ""},
		{"null deletionTimestamp", `{"id":"d","partitionKey":"p","deletionTimestamp":null}`,
			docVersion{key: docKey{"p", "d"}, version: 1}, ""},
		{"operation", `{"id":"d","partitionKey":"p","properties":{"status":"Deleting"}}`,
			docVersion{key: docKey{"p", "d"}, version: 1, status: "Deleting"}, ""},
		{"resource", `{"id":"d","partitionKey":"p","properties":{"status":{"x":1},"serviceProviderProperties":{"clusterServiceID":"/api/c/1"}}}`,
			docVersion{key: docKey{"p", "d"}, version: 1, csID: "/api/c/1"}, ""},
		{"no partition key", `{"id":"d"}`, docVersion{}, `partitionKey ""`},
		{"not JSON", `{`, docVersion{}, "decoding a stored document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readVersion([]byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("readVersion = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
