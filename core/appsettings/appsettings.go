// Package appsettings holds the record of the settings a serving Function
// App judges operations with (lifecycle.Settings: stuck thresholds,
// deadlines, notification backoff). The app writes it when it starts, in
// the leases container it owns, so that the operator CLI, which runs in
// another shell against the same database, judges with the app's settings
// rather than its own. The Resources container is the frontend's: a
// document of ours there would enter its change feed and its queries.
package appsettings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hcpops/hcpops/core/store"
)

// ID is the record's id (and, in the leases container, its partition
// key). The trigger's own leases are named for the account, database and
// container, so no lease can take it.
const ID = "hcpops.settings"

// Kind tells the record from a lease for a reader of the container.
const Kind = "hcpops.appsettings"

// callTimeout bounds each read and write whatever the caller's context
// says: a slow database costs the record, never the process's start.
const callTimeout = 10 * time.Second

// attempts bounds the writes when other instances write at once.
const attempts = 3

// ErrRaced: other instances wrote the record at every attempt; it holds
// one of theirs.
var ErrRaced = errors.New("the settings record was written by other instances at every attempt")

// Record is what a process recorded.
type Record struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Settings are lifecycle.Settings of the process.
	Settings map[string]string `json:"settings"`
	// RecordedAt is when they were last written (unchanged settings are
	// not rewritten: it is when they took effect).
	RecordedAt time.Time `json:"recordedAt"`
	// RecordedBy names the instance that wrote them.
	RecordedBy string `json:"recordedBy"`
}

// Container is where the record is kept: cosmos.Leases.
type Container interface {
	Get(ctx context.Context, id string) (store.Item, error)
	Put(ctx context.Context, doc []byte, ifMatch string) (store.Item, error)
}

// Save records settings as by's unless the record already holds them, so
// a scale-out of instances with the same settings writes once. A write
// raced by another instance is read again, at most attempts times.
func Save(ctx context.Context, c Container, settings map[string]string, by string, now time.Time) (wrote bool, err error) {
	for range attempts {
		cur, etag, err := load(ctx, c)
		switch {
		case errors.Is(err, store.ErrNotFound):
			etag = ""
		case errors.Is(err, store.ErrInvalid) && etag != "":
			// A damaged record is replaced, guarded as any write.
		case err != nil:
			return false, err
		case maps.Equal(cur.Settings, settings):
			return false, nil
		}
		body, err := json.Marshal(Record{ID: ID, Kind: Kind, Settings: settings, RecordedAt: now.UTC(), RecordedBy: by})
		if err != nil {
			return false, fmt.Errorf("encoding the settings record: %w", err)
		}
		err = put(ctx, c, body, etag)
		if errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, fmt.Errorf("recording settings after %d attempts: %w", attempts, ErrRaced)
}

// Load reads the record; store.ErrNotFound when no process has written
// one (an app from before it, or never started on this database).
func Load(ctx context.Context, c Container) (Record, error) {
	r, _, err := load(ctx, c)
	return r, err
}

func load(ctx context.Context, c Container) (Record, string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	it, err := c.Get(ctx, ID)
	if err != nil {
		return Record{}, "", fmt.Errorf("reading the settings record %s: %w", ID, err)
	}
	var r Record
	if err := json.Unmarshal(it.Body, &r); err != nil {
		return Record{}, it.ETag, fmt.Errorf("reading the settings record %s: %w: %w", ID, store.ErrInvalid, err)
	}
	if r.Kind != Kind {
		return Record{}, it.ETag, fmt.Errorf("reading the settings record %s: %w: kind %q, want %q", ID, store.ErrInvalid, r.Kind, Kind)
	}
	return r, it.ETag, nil
}

func put(ctx context.Context, c Container, body []byte, etag string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.Put(ctx, body, etag); err != nil {
		return fmt.Errorf("writing the settings record %s: %w", ID, err)
	}
	return nil
}
