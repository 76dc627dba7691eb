package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"
)

// errHelp: usage was printed because it was asked for; the command exits 0.
var errHelp = errors.New("help requested")

// command is one subcommand's flag set with its synopsis.
func command(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("hcpops "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned once, not printed here too
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: hcpops %s %s\n\n%s\n", name, synopsis, about)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nflags (before or after the arguments):")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse reads flags wherever they stand among args (Go's flag package
// stops at the first argument) and returns the arguments. -h prints the
// usage to stdout and returns errHelp.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, errHelp
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

// checkSubscription insists on what ARM hands out: a UUID in its
// canonical 8-4-4-4-12 form.
func checkSubscription(field, v string) error {
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return fmt.Errorf("%s %q: a subscription ID is a UUID such as 1d3378d3-5a3f-4712-85a1-2485495dfc4b", field, v)
	}
	return nil
}

// usageError is a wrong number of arguments, with the synopsis.
func usageError(fs *flag.FlagSet, synopsis string) error {
	return fmt.Errorf("usage: %s %s ('%s -h' for more)", fs.Name(), synopsis, fs.Name())
}
