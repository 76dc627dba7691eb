package localstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/harness/storeapi"
	"github.com/hcpops/hcpops/harness/testsupport"
)

func dirEnv(dir string) func(string) string {
	return func(k string) string {
		if k == EnvDataDir {
			return dir
		}
		return ""
	}
}

// With a running process sharing the data dir's store, the CLI's store is
// that process's, reached through its store API.
func TestConnectStoreUsesTheRunningProcess(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	held, err := OpenEmbedded(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	sh, err := storeapi.Share(held, dir, storeapi.Advert{Command: "hcpopsctl dev"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	s, conn, err := ConnectStore(context.Background(), dirEnv(dir), ReadWrite, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if name := conn.Name; !strings.Contains(name, "hcpopsctl dev (pid ") || conn.Process == nil {
		t.Errorf("store name %q does not name the running process", name)
	}
	if _, err := s.Create(context.Background(), "pk", []byte(`{"id":"a","partitionKey":"pk"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := held.Get(context.Background(), "pk", "a"); err != nil {
		t.Errorf("the CLI's write is not in the running process's store: %v", err)
	}
}

// A store held by a process that does not answer is an error naming the
// holder and what to do; so is one held with no advert at all.
func TestHeldStoreNamesItsHolder(t *testing.T) {
	// What it checks is the embedded store's wait for a held file's lock,
	// which is the wall clock's (bbolt's 2s flock timeout), twice.
	testsupport.RealStack(t, "4s of real time: two waits for a held file's lock")
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	held, err := OpenEmbedded(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, _, err = ConnectStore(context.Background(), dirEnv(dir), ReadWrite, logger)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("is held by process %d: stop it, or use another data dir", os.Getpid())) {
		t.Errorf("held without an advert: %v", err)
	}
	sh, err := storeapi.Share(held, dir, storeapi.Advert{Command: "hcpops serve"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	// The process stops answering but keeps the file, and its advert.
	adv := abandon(t, sh, dir)
	_, _, err = ConnectStore(context.Background(), dirEnv(dir), ReadOnly, logger)
	if err == nil || !strings.Contains(err.Error(), "held by hcpops serve (pid ") || adv.PID == 0 {
		t.Errorf("held by a silent process: %v", err)
	}
}

// abandon stops sh's API as a SIGKILL would: the advert stays behind.
func abandon(t *testing.T, sh *storeapi.Shared, dir string) storeapi.Advert {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, storeapi.AdvertFile))
	if err != nil {
		t.Fatal(err)
	}
	sh.Close()
	if err := os.WriteFile(filepath.Join(dir, storeapi.AdvertFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return sh.Advert()
}

func TestConnectStoreReadOnlyCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	for _, access := range []Access{ReadOnly, WriteExisting} {
		_, _, err := ConnectStore(context.Background(), dirEnv(dir), access, slog.New(slog.DiscardHandler))
		if !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), "no store at") {
			t.Errorf("access %d: err = %v, want 'no store at'", access, err)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only connect created %s: %v", dir, err)
	}
	s, _, err := ConnectStore(context.Background(), dirEnv(dir), ReadWrite, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(context.Background(), "pk", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("fresh store Get: %v", err)
	}
}

// TestImpostorAdvertFallsBackToTheFile: the store's owner died (its file
// unlocked, its advert left); a process squatting the advertised port and
// answering with the advertised pid gets no call, and the CLI writes to
// the file itself.
func TestImpostorAdvertFallsBackToTheFile(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	held, err := OpenEmbedded(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := storeapi.Share(held, dir, storeapi.Advert{Command: "hcpops serve"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	adv := abandon(t, sh, dir)
	held.Close()
	ln, err := net.Listen("tcp", strings.TrimPrefix(adv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	imp := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"pid":%d,"item":{"body":"e30=","etag":"1"}}`, adv.PID)
	})}
	go func() { _ = imp.Serve(ln) }()
	defer imp.Close()

	s, conn, err := ConnectStore(context.Background(), dirEnv(dir), ReadWrite, logger)
	if err != nil {
		t.Fatal(err)
	}
	if conn.Process != nil || conn.File == "" {
		t.Errorf("connection %+v, want the embedded file", conn)
	}
	if _, err := s.Create(context.Background(), "pk", []byte(`{"id":"a","partitionKey":"pk"}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := calls.Load(); n != 0 {
		t.Errorf("the impostor got %d calls", n)
	}
	again, err := OpenEmbedded(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Get(context.Background(), "pk", "a"); err != nil {
		t.Errorf("the CLI's write is not in the store file: %v", err)
	}
}
