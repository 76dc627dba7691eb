package triggerhost

import (
	"context"
	"strings"
	"testing"
)

func TestNewRefusesWhatItCannotRun(t *testing.T) {
	timer := writeApp(t, hostJSON, map[string]string{"tick": timerFunction("0 * * * * *", "")})
	badSchedule := writeApp(t, hostJSON, map[string]string{"tick": timerFunction("every minute", "")})
	feed := writeApp(t, hostJSON, map[string]string{"dispatch": feedFunction("")})
	worker := newTestHandler().worker()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no app", Config{Worker: worker, StateDir: t.TempDir()}, "no app"},
		{"no state dir", Config{App: timer, Worker: worker}, "StateDir"},
		{"no worker", Config{App: timer, StateDir: t.TempDir()}, "nil worker"},
		{"public address", Config{App: timer, Worker: worker, StateDir: t.TempDir(), HTTPAddr: "0.0.0.0:7071"}, "loopback only"},
		{"remote address", Config{App: timer, Worker: worker, StateDir: t.TempDir(), HTTPAddr: "10.1.2.3:80"}, "loopback only"},
		{"no port", Config{App: timer, Worker: worker, StateDir: t.TempDir(), HTTPAddr: "127.0.0.1"}, "host:port"},
		{"bad schedule", Config{App: badSchedule, Worker: worker, StateDir: t.TempDir()}, `function tick: binding "myTimer": schedule "every minute"`},
		{"feed without store", Config{App: feed, Worker: worker, StateDir: t.TempDir()}, "needs a change feed"},
		{"reorder above 1", Config{App: timer, Worker: worker, StateDir: t.TempDir(), FeedFaults: &FeedFaults{Reorder: 1.5}}, "FeedFaults.Reorder 1.5"},
		{"negative reorder", Config{App: timer, Worker: worker, StateDir: t.TempDir(), FeedFaults: &FeedFaults{Reorder: -0.1}}, "FeedFaults.Reorder -0.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	h, err := New(Config{App: timer, Worker: worker, StateDir: t.TempDir(), HTTPAddr: ":0"})
	if err != nil || h.httpAddr != "127.0.0.1:0" {
		t.Errorf(`":0" -> %q, %v; want 127.0.0.1:0`, h.httpAddr, err)
	}
}

func TestRunIsOnceOnly(t *testing.T) {
	app := writeApp(t, hostJSON, map[string]string{"tick": timerFunction("0 0 * * * *", "")})
	h := startHost(t, Config{App: app, Worker: newTestHandler().worker(), StateDir: t.TempDir()})
	if err := h.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "once") {
		t.Errorf("second Run: %v", err)
	}
}
