package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/lifecycle"
	"github.com/hcpops/hcpops/core/notification"
	"github.com/hcpops/hcpops/internal/cli"
	"github.com/hcpops/hcpops/logging"
)

// opsAbandon is `hcpopsctl ops fail|cancel OPERATION -reason TEXT`: an
// operator ends an active operation the backend cannot finish, with the
// lifecycle's own terminal write (lifecycle.Abandon).
func opsAbandon(ctx context.Context, env Env, verb string, args []string) error {
	stdout, getenv := env.Stdout, env.Getenv
	status := arm.ProvisioningStateFailed
	if verb == "cancel" {
		status = arm.ProvisioningStateCanceled
	}
	synopsis := "OPERATION -reason TEXT [-by NAME] [-subscription SUB]"
	fs := cli.Command(env.Prog+" ops "+verb, synopsis, fmt.Sprintf("Ends an active operation by hand as %s, code %s, with the reason and the operator in\n"+
		"its error, the resource's provisioningState moved as the lifecycle would, ARM notified, and an\n"+
		"%s record. For an operation the backend cannot finish (Clusters Service lost the\n"+
		"object, a resource document a person must repair); never for one CS is merely slow with\n"+
		"(docs/runbooks.md#ending-an-operation-by-hand). A terminal or unknown operation is refused.\n"+
		"OPERATION is what submit prints (status path or URL), or the UUID with -subscription.",
		status, lifecycle.CodeOperationAbandoned, lifecycle.MsgAbandoned))
	reason := fs.String("reason", "", "why the operation is ended by hand (required; ARM and the customer see it)")
	by := fs.String("by", getenv("USER"), "who ends it (default $USER)")
	sub := fs.String("subscription", "", "subscription ID (when OPERATION is a bare UUID)")
	pos, err := cli.Parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.UsageError(fs, synopsis)
	}
	switch {
	case strings.TrimSpace(*reason) == "":
		return errors.New("-reason is required: say why the operation is ended by hand; nothing was written")
	case strings.TrimSpace(*by) == "":
		return errors.New("-by is empty and $USER unset: say who ends the operation; nothing was written")
	}
	ref, err := ParseOperationRef(pos[0], *sub)
	if err != nil {
		return err
	}
	s, conn, err := env.Connect(ctx, true, false)
	if err != nil {
		return err
	}
	defer s.Close()
	conn = withRecord(ctx, conn)
	cfg, from, err := judgeConfig(getenv, conn)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	logger, closeLog := actionLog(env)
	defer closeLog()
	got, err := lifecycle.Abandon(ctx, lifecycle.AbandonDeps{Store: s, Notifier: leftToServer{}, Clock: clock.Real{}, Logger: logger}, cfg,
		lifecycle.AbandonRequest{PartitionKey: ref.PK(), ID: ref.ID(), Status: status, Reason: *reason, By: *by})
	if err != nil {
		return err
	}
	p := got.Operation.Properties
	fmt.Fprintf(stdout, "%-10s %s %s (was %s): %s: %s\n", verb+"ed", ref.Name, p.Status, got.From, p.Error.Code, p.Error.Message)
	if got.ResourceUpdated {
		fmt.Fprintf(stdout, "%-10s %s provisioningState %s\n", "resource", resourceName(p.ExternalID), p.Status)
	} else {
		fmt.Fprintf(stdout, "%-10s %s unchanged (not this operation's, or gone)\n", "resource", resourceName(p.ExternalID))
	}
	if got.NotificationPending {
		who := conn.Server
		if conn.Process != nil {
			who = fmt.Sprintf("%s (pid %d) on its next tick", conn.Process.Command, conn.Process.PID)
		}
		fmt.Fprintf(stdout, "%-10s ARM is told by %s\n", "notify", who)
	}
	return nil
}

// leftToServer leaves the ARM notification to the process that serves the
// store: the terminal operation keeps its notificationUri, which that
// process's tick posts (and retries) as for any terminal state, with the
// notification settings and allow-list it runs with.
type leftToServer struct{}

func (leftToServer) Notify(context.Context, string, arm.OperationStatus) error {
	return fmt.Errorf("%w: left to the process serving the store", notification.ErrInFlight)
}

// actionLog is where ops fail and cancel write their records
// (operation.transition, operation.abandoned): where the build says (the
// local process's log, where history and ops read them), else stderr.
func actionLog(env Env) (*slog.Logger, func()) {
	if env.ActionLog != nil {
		return env.ActionLog()
	}
	return slog.New(logging.Handler(slog.NewJSONHandler(os.Stderr, nil))), func() {}
}
