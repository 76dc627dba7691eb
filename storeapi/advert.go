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
)

// AdvertFile is the file in the data dir that says where the running
// process serves its store. It is readable by the owner only: the token
// in it is the key to the store.
const AdvertFile = "store-api.json"

// Advert is what a running process publishes about its store.
type Advert struct {
	URL     string    `json:"url"`
	Token   string    `json:"token"`
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	// FunctionsURL is the running process's front door for HTTP
	// functions (hcpops dev), so the CLI can print a status curl.
	FunctionsURL string `json:"functionsURL,omitempty"`
	// Store names the store the process serves (app.CosmosStoreName or
	// EmbeddedStoreName), so a CLI configured for another refuses to
	// write where the process would never look.
	Store string `json:"store,omitempty"`
}

// ErrNoAdvert: no process advertises a store in the directory.
var ErrNoAdvert = errors.New("no running hcpops process advertises this store")

// Shared is a store served to other processes; Close withdraws it.
type Shared struct {
	srv    *Server
	path   string
	advert Advert
}

// Share serves s on loopback and advertises it in dir. about names the
// holder (Command, "hcpops dev") and its FunctionsURL; Share fills in the
// rest.
func Share(s store.Store, dir string, about Advert, logger *slog.Logger) (*Shared, error) {
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	srv, err := Listen(s, token, logger)
	if err != nil {
		return nil, err
	}
	a := about
	a.URL, a.Token, a.PID, a.Since = srv.URL(), token, os.Getpid(), time.Now().UTC().Truncate(time.Second)
	path := filepath.Join(dir, AdvertFile)
	if err := writeAdvert(path, a); err != nil {
		_ = srv.Close()
		return nil, err
	}
	logger.Info("store shared with the CLI", "url", a.URL, "advert", path)
	return &Shared{srv: srv, path: path, advert: a}, nil
}

// Advert is what Share published.
func (sh *Shared) Advert() Advert { return sh.advert }

// Close removes the advert (if it is still ours) and stops serving.
func (sh *Shared) Close() error {
	if cur, err := ReadAdvert(filepath.Dir(sh.path)); err == nil && cur.Token == sh.advert.Token {
		_ = os.Remove(sh.path)
	}
	return sh.srv.Close()
}

// ReadAdvert reads dir's advert; ErrNoAdvert when there is none.
func ReadAdvert(dir string) (Advert, error) {
	path := filepath.Join(dir, AdvertFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Advert{}, ErrNoAdvert
	}
	if err != nil {
		return Advert{}, fmt.Errorf("reading %s: %w", path, err)
	}
	var a Advert
	if err := json.Unmarshal(b, &a); err != nil || a.URL == "" || a.Token == "" {
		return Advert{}, fmt.Errorf("%s is damaged (%v); delete it if no hcpops process runs", path, err)
	}
	return a, nil
}

// Dial connects to the store advertised in dir if its process answers
// within timeout. ErrNoAdvert when none is advertised; another error when
// the advert is stale (its process is gone) or the process does not answer.
func Dial(ctx context.Context, dir string, timeout time.Duration) (*Client, Advert, error) {
	a, err := ReadAdvert(dir)
	if err != nil {
		return nil, a, err
	}
	c := NewClient(a.URL, a.Token)
	pid, err := c.Ping(ctx, timeout)
	if err != nil {
		return nil, a, fmt.Errorf("%s (pid %d) advertises its store at %s but does not answer: %w", a.Command, a.PID, a.URL, err)
	}
	if pid != a.PID {
		return nil, a, fmt.Errorf("%s at %s answers as pid %d, not the advertised %d", a.Command, a.URL, pid, a.PID)
	}
	return c, a, nil
}

// writeAdvert writes atomically (temp file, rename), owner-only.
func writeAdvert(path string, a Advert) error {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), AdvertFile+".*")
	if err != nil {
		return fmt.Errorf("advertising the store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("advertising the store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("advertising the store: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
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
