package simulator

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// The serve helpers hold the one shape every CS handler shares: do the
// work under the state lock on simulated time, then answer with the result
// in CS's wire format or with the error as a CS error body. Handlers keep
// only what differs: lookups, checks and state changes.

// fail writes err as a CS error body: an apiError keeps its status and
// reason, anything else is a 500.
func (s *Simulator) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		s.writeError(w, r, ae.status, ae.reason)
		return
	}
	s.writeError(w, r, http.StatusInternalServerError, err.Error())
}

// readObject reads a required request body and parses it with an SDK
// reader; its errors are meant for a 400.
func readObject[T any](r *http.Request, unmarshal func(any) (T, error)) (T, error) {
	data, err := readBody(r, false)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(data, unmarshal)
}

// serveObject answers with the object build returns (run under the state
// lock), or with its error.
func serveObject[T any](s *Simulator, w http.ResponseWriter, r *http.Request, status int,
	marshal func(T, io.Writer) error, build func(now time.Time) (T, error)) {
	var out T
	err := s.locked(func(now time.Time) (err error) {
		out, err = build(now)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeObject(s, w, r, status, out, marshal)
}

// serveNoContent answers 204 once change (run under the state lock)
// succeeds, or with its error.
func (s *Simulator) serveNoContent(w http.ResponseWriter, r *http.Request, change func(now time.Time) error) {
	if err := s.locked(change); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// serveList answers a paged CS list: a bad page or size is a 400; list
// (run under the state lock) returns the requested page and the total.
func serveList[T any](s *Simulator, w http.ResponseWriter, r *http.Request, kind string,
	marshal func([]T, io.Writer) error, list func(now time.Time, page, size int) ([]T, int, error)) {
	page, size, err := s.paging(r)
	if err != nil {
		s.badRequest(w, r, "%v", err)
		return
	}
	var items []T
	total := 0
	err = s.locked(func(now time.Time) (err error) {
		items, total, err = list(now, page, size)
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(s, w, r, kind, page, total, items, marshal)
}

// renderPage renders the items of all that fall on the page, and returns
// them with the total, for serveList.
func renderPage[T, O any](all []T, page, size int, render func(T) (O, error)) ([]O, int, error) {
	var out []O
	for _, item := range pageOf(all, page, size) {
		obj, err := render(item)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, obj)
	}
	return out, len(all), nil
}
