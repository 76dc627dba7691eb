package testsupport

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				fmt.Fprintln(&b, "line")
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}

// Await sees a write made after it started waiting, and returns what had
// been written when its condition held.
func TestBufferAwaitSeesLaterWrites(t *testing.T) {
	var b Buffer
	fmt.Fprint(&b, "starting\n")
	started := make(chan struct{})
	go func() {
		<-started
		fmt.Fprint(&b, "half ")
		fmt.Fprint(&b, "ready\n")
	}()
	got := b.Await(t, "ready", func(s string) bool {
		select {
		case <-started:
		default:
			close(started) // the writer starts only once Await is waiting
		}
		return strings.Contains(s, "ready")
	})
	if got != "starting\nhalf ready\n" {
		t.Errorf("Await returned %q", got)
	}
}

// Await fails its test, naming what it waited for, when the condition
// never holds.
func TestBufferAwaitFailsNamingWhat(t *testing.T) {
	b := Buffer{Limit: 10 * time.Millisecond} // the deadline path is real time
	ft := &fatalT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.AwaitText(ft, "never")
	}()
	<-done
	if !strings.Contains(ft.msg, "waiting for never") {
		t.Errorf("failure message %q does not name what it waited for", ft.msg)
	}
}

// fatalT records a Fatalf and ends the goroutine as testing.T does.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
