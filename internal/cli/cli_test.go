package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		pos     []string
		n       int
		wantErr string
	}{
		{args: []string{"a", "-n", "3", "b"}, pos: []string{"a", "b"}, n: 3},
		{args: []string{"-n", "2"}, n: 2},
		{args: []string{"a", "-bogus"}, wantErr: "hcpopsctl x: flag provided but not defined: -bogus ('hcpopsctl x -h' lists flags)"},
	} {
		fs := Command("hcpopsctl x", "[ARG...]", "About x.")
		n := fs.Int("n", 0, "a number")
		pos, err := Parse(fs, tc.args, &bytes.Buffer{})
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Parse(%q) = %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(pos, " ") != strings.Join(tc.pos, " ") || *n != tc.n {
			t.Errorf("Parse(%q) = %q, n=%d, %v; want %q, n=%d", tc.args, pos, *n, err, tc.pos, tc.n)
		}
	}
	var out bytes.Buffer
	fs := Command("hcpopsctl x", "[ARG...]", "About x.")
	fs.Bool("v", false, "verbose")
	if _, err := Parse(fs, []string{"-h"}, &out); !errors.Is(err, ErrHelp) ||
		!strings.Contains(out.String(), "usage: hcpopsctl x [ARG...]\n\nAbout x.") || !strings.Contains(out.String(), "-v") {
		t.Errorf("-h: %v, printed %q", err, out.String())
	}
}

func TestNamed(t *testing.T) {
	plain := errors.New("boom")
	for _, tc := range []struct {
		cmd  string
		err  error
		want string
	}{
		{"hcpopsctl status", plain, "hcpopsctl status: boom"},
		{"hcpopsctl", plain, "hcpopsctl: boom"},
		{"hcpops serve", plain, "hcpops serve: boom"},
		{"hcpopsctl status", errors.New("hcpopsctl status: flag provided but not defined"), "hcpopsctl status: flag provided but not defined"},
		{"hcpopsctl status", errors.New("usage: hcpopsctl status OP"), "usage: hcpopsctl status OP"},
		{"hcpopsctl doc", Named("hcpopsctl status", plain), "hcpopsctl status: boom"}, // named once
	} {
		if got := Named(tc.cmd, tc.err).Error(); got != tc.want {
			t.Errorf("Named(%q, %v) = %q, want %q", tc.cmd, tc.err, got, tc.want)
		}
	}
	if Named("x", nil) != nil || Named("x", ErrHelp) != ErrHelp {
		t.Error("nil and ErrHelp must pass through")
	}
	if !errors.Is(Named("x", plain), plain) {
		t.Error("a named error must wrap its cause")
	}
}
