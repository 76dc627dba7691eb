package embedded

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hcpops/hcpops/core/store"
)

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.db")
	db, err := bolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(metaFormatKey, []byte("other-format"))
	}); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	notBolt := filepath.Join(dir, "text.db")
	if err := os.WriteFile(notBolt, bytes.Repeat([]byte("not a bolt file "), 1024), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		opts []Option
		want string
	}{
		{"empty path", "", nil, "path is empty"},
		{"directory", dir, nil, dir},
		{"not a bbolt file", notBolt, nil, notBolt},
		{"other format", foreign, nil, `"other-format"`},
		{"nil clock", filepath.Join(dir, "a.db"), []Option{WithClock(nil)}, "clock is nil"},
		{"bad sweep interval", filepath.Join(dir, "b.db"), []Option{WithSweepInterval(0)}, "sweep interval is 0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.path, tc.opts...)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %s", err, tc.want)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	item := mustCreate(t, s, body("a", ``))
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	noop := func([]store.Item) error { return nil }
	tooMany := make([]store.BatchOp, store.MaxBatchOps+1)
	tests := []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"empty partition key", func() error { _, err := s.Get(ctx, "", "a"); return err }, store.ErrInvalid, "partition key is empty"},
		{"id with a slash", func() error { _, err := s.Get(ctx, pk, "a/b"); return err }, store.ErrInvalid, `"a/b"`},
		{"replace changes the id", func() error { _, err := s.Replace(ctx, pk, "a", body("b", ``), item.ETag); return err }, store.ErrInvalid, `id is "b", want "a"`},
		{"create in the wrong partition", func() error { _, err := s.Create(ctx, "other", body("z", ``)); return err }, store.ErrInvalid, "partitionKey"},
		{"batch too long", func() error { _, err := s.Batch(ctx, pk, tooMany); return err }, store.ErrInvalid, "101 steps"},
		{"batch delete without etag", func() error {
			_, err := s.Batch(ctx, pk, []store.BatchOp{{Kind: store.OpDelete, ID: "a"}})
			return err
		}, store.ErrInvalid, "no If-Match"},
		{"batch unknown kind", func() error {
			_, err := s.Batch(ctx, pk, []store.BatchOp{{Kind: "Upsert", ID: "a"}})
			return err
		}, store.ErrInvalid, `"Upsert"`},
		{"batch create names its id", func() error {
			_, err := s.Batch(ctx, pk, []store.BatchOp{{Kind: store.OpCreate, Body: []byte(`{"id":"q","partitionKey":"x"}`)}})
			return err
		}, store.ErrInvalid, "step 0 (Create q)"},
		{"negative page size", func() error {
			return s.ActiveOperations(ctx, store.ActiveOperationsQuery{PageSize: -1}, noop)
		}, store.ErrInvalid, "page size is -1"},
		{"nil callback", func() error { return s.ActiveOperations(ctx, store.ActiveOperationsQuery{}, nil) }, store.ErrInvalid, "callback is nil"},
		{"children of nothing", func() error { return s.Children(ctx, pk, "", noop) }, store.ErrInvalid, "parent resource ID is empty"},
		{"foreign continuation", func() error { _, err := s.ChangeFeed(ctx, "abc", 1); return err }, store.ErrInvalid, `"abc"`},
		{"negative feed size", func() error { _, err := s.ChangeFeed(ctx, "", -5); return err }, store.ErrInvalid, "-5"},
		{"canceled context", func() error { _, err := s.Create(canceled, pk, body("c", ``)); return err }, context.Canceled, "context canceled"},
		{"canceled stream", func() error { return s.Children(canceled, pk, "/subscriptions", noop) }, context.Canceled, "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v mentioning %s", err, tc.want, tc.msg)
			}
		})
	}
	var be *store.BatchError
	_, err := s.Batch(ctx, pk, []store.BatchOp{{Kind: store.OpCreate, Body: body("new", ``)}, {Kind: store.OpCreate, Body: body("a", ``)}})
	if !errors.As(err, &be) || be.Index != 1 || be.ID != "a" || !errors.Is(err, store.ErrConflict) {
		t.Errorf("Batch err = %v, want a BatchError for step 1 (a) wrapping ErrConflict", err)
	}
}
