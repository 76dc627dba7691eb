package storeapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/atomicfile"
)

// AdvertFile is the file in the data dir that says where the running
// process serves its store. It is readable by the owner only: the token
// in it is the key to the store.
const AdvertFile = "store-api.json"

// Advert is what a running process publishes about its store.
type Advert struct {
	URL     string `json:"url"`
	Token   string `json:"token"`
	PID     int    `json:"pid"`
	Command string `json:"command"`
	// Lock is the file whose flock the process holds while it serves:
	// an embedded store's own file (bbolt's lock), else the share's lock
	// file in the data dir. The CLI trusts the advert only while PID
	// holds it.
	Lock  string    `json:"lock"`
	Since time.Time `json:"since"`
	// FunctionsURL is the running process's front door for HTTP
	// functions (hcpopsctl dev), so the CLI can print a status curl.
	FunctionsURL string `json:"functionsURL,omitempty"`
	// Store names the store the process serves (localstore.CosmosStoreName or
	// EmbeddedStoreName), so a CLI configured for another refuses to
	// write where the process would never look.
	Store string `json:"store,omitempty"`
	// Settings are the settings the process judges operations with (the
	// lifecycle's HCPOPS_* values as it read them: stuck thresholds,
	// deadlines, notification backoff), so the CLI judges as it does, not
	// as its own shell happens to be set.
	Settings map[string]string `json:"settings,omitempty"`
	// NotificationURL is the base of the process's stand-in for ARM's
	// notification endpoint (hcpopsctl dev's sink), so what submit writes
	// beside it is notified where a person can see and steer it.
	NotificationURL string `json:"notificationURL,omitempty"`
}

// ErrNoAdvert: no process advertises a store in the directory.
var ErrNoAdvert = errors.New("no running hcpops process advertises this store")

// LockFile is the file in the data dir a process sharing a store that has
// no file of its own (Cosmos DB) holds a flock on while it serves.
const LockFile = "store-api.lock"

// Shared is a store served to other processes; Close withdraws it.
type Shared struct {
	srv     *Server
	path    string
	advert  Advert
	release func()
}

// Share serves s on loopback and advertises it in dir. about names the
// holder (Command, "hcpopsctl dev") and its FunctionsURL; Share fills in the
// rest.
func Share(s store.Store, dir string, about Advert, logger *slog.Logger) (*Shared, error) {
	lock, release, err := shareLock(s, dir)
	if err != nil {
		return nil, fmt.Errorf("sharing the store: %w", err)
	}
	token, err := newToken()
	if err != nil {
		release()
		return nil, err
	}
	srv, err := Listen(s, token, logger)
	if err != nil {
		release()
		return nil, err
	}
	a := about
	a.URL, a.Token, a.PID, a.Since = srv.URL(), token, os.Getpid(), time.Now().UTC().Truncate(time.Second)
	a.Lock = lock
	path := filepath.Join(dir, AdvertFile)
	if err := writeAdvert(path, a); err != nil {
		_ = srv.Close()
		release()
		return nil, err
	}
	logger.Info("store shared with the CLI", "url", a.URL, "advert", path)
	return &Shared{srv: srv, path: path, advert: a, release: release}, nil
}

// shareLock is the lock an advert names: an embedded store's file, which
// its holder has flock'ed already, or the data dir's LockFile, taken here
// and held until release.
func shareLock(s store.Store, dir string) (string, func(), error) {
	if file, ok := s.(interface{ Path() string }); ok {
		path, err := filepath.Abs(file.Path())
		return path, func() {}, err
	}
	path, err := filepath.Abs(filepath.Join(dir, LockFile))
	if err != nil {
		return "", nil, err
	}
	release, err := takeLock(path)
	return path, release, err
}

// Advert is what Share published.
func (sh *Shared) Advert() Advert { return sh.advert }

// Close removes the advert (if it is still ours) and stops serving.
func (sh *Shared) Close() error {
	return sh.CloseAfter(func() error { return nil })
}

// CloseAfter stops serving, runs closeStore (the holder closing the store,
// which frees the file's lock) and only then removes the advert. An advert
// gone therefore means the store is free: a CLI that finds none opens the
// file at once, instead of meeting a lock held through its holder's
// shutdown. In between, the advert's pid no longer answers, so a CLI falls
// back to the file as for any stale advert.
func (sh *Shared) CloseAfter(closeStore func() error) error {
	err := sh.srv.Close()
	err = errors.Join(err, closeStore())
	if cur, rerr := ReadAdvert(filepath.Dir(sh.path)); rerr == nil && cur.Token == sh.advert.Token {
		_ = os.Remove(sh.path)
	}
	sh.release()
	return err
}

// maxAdvertBytes bounds an advert read: a sound one is a few hundred bytes.
const maxAdvertBytes = 64 << 10

// ReadAdvert reads dir's advert; ErrNoAdvert when there is none. It is for
// naming a holder: only Dial's checks make an advert something to send
// writes to.
func ReadAdvert(dir string) (Advert, error) {
	path := filepath.Join(dir, AdvertFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Advert{}, ErrNoAdvert
	}
	if err != nil {
		return Advert{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return parseAdvert(path, b)
}

func parseAdvert(path string, b []byte) (Advert, error) {
	var a Advert
	if err := json.Unmarshal(b, &a); err != nil || a.URL == "" || a.Token == "" {
		return Advert{}, fmt.Errorf("%s is damaged (%v); delete it if no hcpops process runs", path, err)
	}
	return a, nil
}

// Dial connects to the store advertised in dir, once it trusts the
// advert: the file is the current user's and owner-only, its pid runs
// and holds the store file's lock, and the server at its URL proves it
// knows the advert's token before the token or any call is sent to it.
// ErrNoAdvert when none is advertised; otherwise an error naming the
// advert and what is wrong with it (stale: its process is gone; unproven:
// something else answers on its port).
func Dial(ctx context.Context, dir string, timeout time.Duration) (*Client, Advert, error) {
	path := filepath.Join(dir, AdvertFile)
	b, err := readTrusted(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Advert{}, ErrNoAdvert
	}
	if err != nil {
		return nil, Advert{}, err
	}
	a, err := parseAdvert(path, b)
	if err != nil {
		return nil, a, err
	}
	stale := func(err error) error {
		return fmt.Errorf("the advert %s of %s (pid %d) is stale: %w", path, a.Command, a.PID, err)
	}
	if err := processAlive(a.PID); err != nil {
		return nil, a, stale(err)
	}
	if a.Lock == "" {
		return nil, a, stale(errors.New("it names no lock its process holds"))
	}
	if err := holdsLock(a.Lock, a.PID); err != nil {
		return nil, a, stale(err)
	}
	c := NewClient(a.URL, a.Token)
	pid, err := c.Prove(ctx, timeout)
	if err != nil {
		return nil, a, fmt.Errorf("the server at %s named by the advert %s of %s (pid %d) does not prove the advert's token: %w",
			a.URL, path, a.Command, a.PID, err)
	}
	if pid != a.PID {
		return nil, a, fmt.Errorf("the server at %s named by the advert %s answers as pid %d, not the advertised %d", a.URL, path, pid, a.PID)
	}
	return c, a, nil
}

// writeAdvert writes atomically (temp file, rename), owner-only.
func writeAdvert(path string, a Advert) error {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("advertising the store: %w", err)
	}
	return nil
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("store API token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
