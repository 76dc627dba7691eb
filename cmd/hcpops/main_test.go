package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hcpops/hcpops/internal/cli"
)

// The Function App's binary serves and says where the other commands are.
func TestCommands(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		args    []string
		help    bool   // exits 0 having printed its usage
		out     string // in stdout
		wantErr string // in the error, when it fails
	}{
		{args: []string{"-h"}, help: true, out: "usage: hcpops serve"},
		{args: []string{"serve", "-h"}, help: true, out: "-port"},
		{args: []string{"submit", "-resource", "x"}, out: "usage: hcpops serve", wantErr: `unknown command "submit": the Function App's binary only serves; the developer commands are in hcpopsctl, built from harness/cmd/hcpopsctl`},
		{args: nil, out: "usage:", wantErr: "hcpops: no command given"},
		{args: []string{"serve"}, wantErr: "hcpops serve: serve: FUNCTIONS_CUSTOMHANDLER_PORT is not set"},
	} {
		var out bytes.Buffer
		err := run(context.Background(), tc.args, noEnv, &out)
		switch {
		case tc.help && !errors.Is(err, cli.ErrHelp) && err != nil:
			t.Errorf("hcpops %v: %v, want its usage and exit 0", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("hcpops %v: error %v, want %q", tc.args, err, tc.wantErr)
		case !tc.help && tc.wantErr == "" && err != nil:
			t.Errorf("hcpops %v: %v", tc.args, err)
		}
		if !strings.Contains(out.String(), tc.out) {
			t.Errorf("hcpops %v printed %q, want %q in it", tc.args, out.String(), tc.out)
		}
	}
}
