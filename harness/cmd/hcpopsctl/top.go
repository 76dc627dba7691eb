package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hcpops/hcpops/harness/storeapi"
)

// holder follows the process that holds dir's store, for top's second
// line. It dials the store API once and, on each refresh, asks the same
// client to prove itself (one request on a kept connection) instead of
// reading and checking the advert again; it dials afresh only when that
// fails: the process ended, or another took its place.
type holder struct {
	dir  string
	dial func(ctx context.Context, dir string, timeout time.Duration) (*storeapi.Client, storeapi.Advert, error)
	c    *storeapi.Client
	a    storeapi.Advert
}

func newHolder(dir string) *holder { return &holder{dir: dir, dial: storeapi.Dial} }

// status says whether a dev or serve holds dir now.
func (h *holder) status(ctx context.Context) string {
	if h.c != nil {
		if pid, err := h.c.Prove(ctx, time.Second); err == nil && pid == h.a.PID {
			return h.line()
		}
		h.c.Close()
		h.c = nil
	}
	c, a, err := h.dial(ctx, h.dir, time.Second)
	if err != nil {
		return "no hcpopsctl dev or serve runs on " + h.dir + ": no ticks will come until one starts there"
	}
	h.c, h.a = c, a
	return h.line()
}

func (h *holder) line() string {
	return fmt.Sprintf("%s (pid %d) runs on %s", h.a.Command, h.a.PID, h.dir)
}

// close releases the held client.
func (h *holder) close() {
	if h.c != nil {
		h.c.Close()
		h.c = nil
	}
}
