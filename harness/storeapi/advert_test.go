//go:build unix

package storeapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/store/embedded"
)

// impostor answers every request on addr the way a process squatting the
// advertised port after the owner died did: {"pid": pid}, 200. It keeps
// what it was sent.
type impostor struct {
	srv *http.Server
	mu  sync.Mutex
	got []string // "path authorization"
}

func startImpostor(t *testing.T, addr string, pid int) *impostor {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the impostor cannot bind the advertised %s: %v", addr, err)
	}
	im := &impostor{}
	im.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		im.mu.Lock()
		im.got = append(im.got, r.URL.Path+" "+r.Header.Get("Authorization"))
		im.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"pid": pid, "item": map[string]any{"body": "e30=", "etag": "1"}})
	})}
	go func() { _ = im.srv.Serve(ln) }()
	t.Cleanup(func() { _ = im.srv.Close() })
	return im
}

func (im *impostor) requests() []string {
	im.mu.Lock()
	defer im.mu.Unlock()
	return append([]string(nil), im.got...)
}

// shareThenDie shares a store in dir and stops its API as a SIGKILL
// would: the advert stays. With keepStore the file stays locked (the
// process lives on but its API is gone); else the store is closed too.
func shareThenDie(t *testing.T, dir string, keepStore bool) (Advert, *embedded.Store) {
	t.Helper()
	s, err := embedded.Open(filepath.Join(dir, "store.db"), embedded.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	sh, err := Share(s, dir, Advert{Command: "hcpops serve"}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	a := sh.Advert()
	b, err := os.ReadFile(filepath.Join(dir, AdvertFile))
	if err != nil {
		t.Fatal(err)
	}
	_ = sh.srv.Close()
	if !keepStore {
		_ = s.Close()
		s = nil
	} else {
		t.Cleanup(func() { _ = s.Close() })
	}
	if err := os.WriteFile(filepath.Join(dir, AdvertFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return a, s
}

// TestImpostorOnTheAdvertisedPort: after the store's owner died, a process
// that binds the advertised port and answers with the advertised pid gets
// nothing: not the token, not a call. Dial says the advert is stale.
func TestImpostorOnTheAdvertisedPort(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepStore bool // the file is still locked by the advertised pid
		want      string
	}{
		{"owner gone", false, "does not hold"},
		{"owner alive, its API replaced", true, "does not prove"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a, _ := shareThenDie(t, dir, tc.keepStore)
			im := startImpostor(t, strings.TrimPrefix(a.URL, "http://"), a.PID)
			c, _, err := Dial(context.Background(), dir, 5*time.Second)
			if err == nil {
				_, werr := c.Create(context.Background(), "pk", []byte(`{"id":"a","partitionKey":"pk"}`))
				t.Fatalf("Dial trusted the impostor (a write then returned %v)", werr)
			}
			if errors.Is(err, ErrNoAdvert) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), AdvertFile) {
				t.Errorf("Dial: %v; want an error naming the advert and saying it %s", err, tc.want)
			}
			for _, r := range im.requests() {
				if strings.Contains(r, a.Token) || !strings.HasPrefix(r, pathHealth+" ") {
					t.Errorf("the impostor received %q: only a token-less health challenge may reach an unproven server", r)
				}
			}
		})
	}
}

// TestAdvertFileTrust: an advert another user could have written, or
// anyone could read, is not trusted.
func TestAdvertFileTrust(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(filepath.Join(dir, "store.db"), embedded.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sh, err := Share(s, dir, Advert{Command: "hcpops serve"}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	path := filepath.Join(dir, AdvertFile)
	if _, _, err := Dial(context.Background(), dir, 5*time.Second); err != nil {
		t.Fatalf("Dial of a sound advert: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Dial(context.Background(), dir, 5*time.Second); err == nil || !strings.Contains(err.Error(), "owner-only") {
		t.Errorf("Dial of a world-readable advert: %v, want a refusal saying it is not owner-only", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkAdvertFile(path, fi, os.Geteuid()); err != nil {
		t.Errorf("our own owner-only advert: %v", err)
	}
	if err := checkAdvertFile(path, fi, os.Geteuid()+1); err == nil || !strings.Contains(err.Error(), "owned by uid") {
		t.Errorf("an advert owned by another user: %v, want a refusal naming its owner", err)
	}
	if err := checkAdvertFile(path, otherOwner{fi}, os.Geteuid()); err == nil {
		t.Error("an advert whose owner cannot be read was trusted")
	}
}

// otherOwner is a FileInfo without a syscall.Stat_t.
type otherOwner struct{ fs.FileInfo }

func (otherOwner) Sys() any { return (*syscall.Stat_t)(nil) }

// fileless hides the embedded store's file, as a Cosmos DB store has none.
type fileless struct{ store.Store }

// TestShareWithoutAFile: a store with no file of its own is shared under
// the data dir's lock file, which the advert names and the sharing
// process holds; once it stops, the advert is stale.
func TestShareWithoutAFile(t *testing.T) {
	dir := t.TempDir()
	s := fileless{openEmbedded(t)}
	sh, err := Share(s, dir, Advert{Command: "hcpopsctl dev"}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs(filepath.Join(dir, LockFile)); sh.Advert().Lock != want {
		t.Errorf("advert lock %q, want %q", sh.Advert().Lock, want)
	}
	if _, _, err := Dial(context.Background(), dir, 5*time.Second); err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if _, err := Share(s, dir, Advert{Command: "hcpopsctl dev"}, quiet()); err == nil || !strings.Contains(err.Error(), LockFile) {
		t.Errorf("a second share of the data dir: %v, want a refusal naming the lock", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, AdvertFile))
	if err := sh.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, AdvertFile), b, 0o600); err != nil { // as a SIGKILL leaves it
		t.Fatal(err)
	}
	if _, _, err := Dial(context.Background(), dir, 5*time.Second); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("Dial after the sharer stopped: %v, want stale", err)
	}
}

// TestCloseAfterWithdrawsTheAdvertLast: the advert outlives the store it
// names, so its absence tells a CLI that the file is free.
func TestCloseAfterWithdrawsTheAdvertLast(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.db")
	s, err := embedded.Open(path, embedded.WithoutSync())
	if err != nil {
		t.Fatal(err)
	}
	sh, err := Share(s, dir, Advert{Command: "hcpopsctl dev"}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var advertWhileClosing error
	err = sh.CloseAfter(func() error {
		if _, _, err := Dial(context.Background(), dir, time.Second); err == nil {
			t.Error("the store API still answered while the store was closing")
		}
		_, advertWhileClosing = os.Stat(filepath.Join(dir, AdvertFile))
		return s.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if advertWhileClosing != nil {
		t.Errorf("the advert was gone before the store closed: %v", advertWhileClosing)
	}
	if _, err := os.Stat(filepath.Join(dir, AdvertFile)); !os.IsNotExist(err) {
		t.Errorf("advert after CloseAfter: %v, want it removed", err)
	}
	again, err := embedded.Open(path, embedded.WithoutSync())
	if err != nil {
		t.Fatalf("the store file once its advert is gone: %v", err)
	}
	again.Close()
}
