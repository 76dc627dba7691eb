package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/harness/armsink"
	"github.com/hcpops/hcpops/harness/localstore"
	"github.com/hcpops/hcpops/internal/cli"
)

// sinkTimeout bounds one call to the dev's sink.
const sinkTimeout = 5 * time.Second

// sink reads or steers the running hcpopsctl dev's stand-in for ARM's
// notification endpoint, through its documented controls.
func sink(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	const synopsis = "[ok | refuse | hang | fail N]"
	fs := cli.Command(prog+" sink", synopsis, "Reads or steers the running hcpopsctl dev's ARM notification sink, where submit's operations\n"+
		"are notified: ok answers 200; refuse answers every POST 403; hang holds every POST until the\n"+
		"notifier gives up (its timeout); fail N answers the next N POSTs 500, then as the mode says.\n"+
		"Nothing prints the state. The same controls are HTTP: POST "+armsink.ControlPath+"/ok|refuse|hang|fail?n=N,\n"+
		"GET "+armsink.ControlPath+".")
	pos, err := cli.Parse(fs, args, stdout)
	if err != nil {
		return err
	}
	method, path := http.MethodGet, armsink.ControlPath
	switch {
	case len(pos) == 0:
	case len(pos) == 1 && (pos[0] == string(armsink.ModeOK) || pos[0] == string(armsink.ModeRefuse) || pos[0] == string(armsink.ModeHang)):
		method, path = http.MethodPost, path+"/"+pos[0]
	case len(pos) == 2 && pos[0] == "fail":
		if n, err := strconv.Atoi(pos[1]); err != nil || n < 1 {
			return fmt.Errorf("fail %q: want a whole number of POSTs, 1 or more", pos[1])
		}
		method, path = http.MethodPost, path+"/fail?n="+pos[1]
	default:
		return cli.UsageError(fs, synopsis)
	}
	s, conn, err := connect(ctx, getenv, localstore.ReadOnly)
	if err != nil {
		return err
	}
	s.Close()
	if conn.Process == nil || conn.Process.NotificationURL == "" {
		return fmt.Errorf("no hcpopsctl dev runs on %s: the sink is its own, and lives while it runs", localstore.DataDir(getenv))
	}
	base := conn.Process.NotificationURL
	ctx, cancel := context.WithTimeout(ctx, sinkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the sink at %s: %w", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return fmt.Errorf("the sink at %s: reading its answer: %w", base, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the sink at %s: %s: %s", base, resp.Status, strings.TrimSpace(string(body)))
	}
	var st armsink.State
	if err := json.Unmarshal(body, &st); err != nil {
		return errors.Join(fmt.Errorf("the sink at %s answered %.80q", base, body), err)
	}
	_, err = fmt.Fprintf(stdout, "sink %s: %s; fail next %d; %d POSTs answered, %d of them failed on purpose; %d held now\n",
		base, st.Mode, st.FailNext, st.Attempts, st.Failures, st.Holding)
	return err
}
