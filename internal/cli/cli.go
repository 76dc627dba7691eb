// Package cli is how hcpops's commands read their flags and report their
// errors, shared by the Function App's binary (cmd/hcpops: serve) and the
// developer binary (harness/cmd/hcpopsctl: serve, dev, submit, status, ...)
// so both answer -h and a bad flag alike.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Main runs a command on the process's arguments until SIGINT or SIGTERM
// cancels its context, and exits 1 with its error printed when it fails
// (0 when it only printed help): what every hcpops binary's main does.
// First it sets the collector's target (setGC) unless lookup (the
// process environment) has GOGC.
func Main(lookup func(string) (string, bool), run func(ctx context.Context, args []string) error) {
	setGC(lookup)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, ErrHelp) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// ErrHelp: usage was printed because it was asked for; the command exits 0.
var ErrHelp = errors.New("help requested")

// Command is one subcommand's flag set with its synopsis; name is the
// command as typed, binary first ("hcpops serve", "hcpopsctl ops").
func Command(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned once, not printed here too
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s %s\n\n%s\n", name, synopsis, about)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nflags (before or after the arguments):")
			fs.PrintDefaults()
		}
	}
	return fs
}

// Parse reads flags wherever they stand among args (Go's flag package
// stops at the first argument) and returns the arguments. -h prints the
// usage to stdout and returns ErrHelp.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, ErrHelp
			}
			return nil, fmt.Errorf("%s: %w ('%s -h' lists flags)", fs.Name(), err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// UsageError is a wrong number of arguments, with the synopsis.
func UsageError(fs *flag.FlagSet, synopsis string) error {
	return fmt.Errorf("usage: %s %s ('%s -h' for more)", fs.Name(), synopsis, fs.Name())
}

// Error names the command an error came from, once: errors that already
// start with the binary's name (flag errors) or "usage: " keep their own.
type Error struct {
	// Cmd is the command as typed, binary first ("hcpopsctl ops"), or
	// the binary alone.
	Cmd string
	Err error
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	binary, _, _ := strings.Cut(e.Cmd, " ")
	if binary != "" && strings.HasPrefix(msg, binary+" ") || strings.HasPrefix(msg, "usage: ") {
		return msg
	}
	if e.Cmd == "" {
		return msg
	}
	return e.Cmd + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Named is err named for cmd, unless it is nil, help, or named already.
func Named(cmd string, err error) error {
	var named *Error
	if err == nil || errors.Is(err, ErrHelp) || errors.As(err, &named) {
		return err
	}
	return &Error{Cmd: cmd, Err: err}
}
