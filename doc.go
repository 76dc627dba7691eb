package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/hcpops/hcpops/app"
	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
)

// doc reads and loads raw documents in the configured store (embedded or
// Cosmos): for inspecting a database and for seeding fixtures.
func doc(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	const synopsis = "get RESOURCE_ID | put [FILE|-] | list (-subscription SUB | -active)"
	if len(args) == 0 {
		return fmt.Errorf("usage: hcpops doc %s", synopsis)
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, "usage: hcpops doc "+synopsis+"\n\n"+docAbout+"\n\n'hcpops doc get|put|list -h' for each.")
		return errHelp
	case "get":
		fs := command("doc get", "RESOURCE_ID", "Prints a document: an ARM resource ID, or an operation's status path.\n"+docAbout)
		pos, err := parse(fs, rest, stdout)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usageError(fs, "RESOURCE_ID (an ARM resource ID or operation status path)")
		}
		return withStore(ctx, getenv, app.ReadOnly, func(s store.Store) error { return docGet(ctx, s, pos[0], stdout) })
	case "put":
		fs := command("doc put", "[FILE|-]", "Creates each document, or replaces it under its current etag. Input: one JSON document,\na JSON array, or one document per line; - or nothing reads stdin.")
		pos, err := parse(fs, rest, stdout)
		if err != nil {
			return err
		}
		if len(pos) > 1 {
			return usageError(fs, "[FILE|-]")
		}
		return withStore(ctx, getenv, app.ReadWrite, func(s store.Store) error { return docPut(ctx, s, pos, stdin, stdout) })
	case "list":
		return docList(ctx, rest, getenv, stdout)
	default:
		return fmt.Errorf("doc: unknown subcommand %q (want get, put or list)", sub)
	}
}

const docAbout = "Reads and loads raw documents in the store: Cosmos DB when configured, else the running\nhcpops dev/serve's store, else the embedded store in $HCPOPS_DATA_DIR."

// withStore runs fn on the CLI's store and closes it.
func withStore(ctx context.Context, getenv func(string) string, access app.Access, fn func(store.Store) error) error {
	s, _, err := app.ConnectStore(ctx, getenv, access, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

func docGet(ctx context.Context, s store.Store, id string, stdout io.Writer) error {
	rid, err := document.ParseResourceID("RESOURCE_ID", id)
	if err != nil {
		return err
	}
	if err := checkSubscription("RESOURCE_ID's subscription", rid.SubscriptionID); err != nil {
		return err
	}
	if isOperationStatus(rid.ResourceType.Types) {
		id = document.OperationResourceID(rid.SubscriptionID, rid.Name) // the stored ID has no location
	}
	item, err := s.Get(ctx, document.PartitionKey(rid.SubscriptionID), document.CosmosID(id))
	if err != nil {
		return fmt.Errorf("reading %s: %w", id, err)
	}
	return printIndented(stdout, item.Body)
}

// docPut creates each document, or replaces it under its current etag.
// Input: one JSON document, a JSON array, or one document per line.
func docPut(ctx context.Context, s store.Store, args []string, stdin io.Reader, stdout io.Writer) error {
	in := stdin
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	dec := json.NewDecoder(in)
	for n := 0; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("doc put: input document %d: %w", n, err)
		}
		docs := []json.RawMessage{raw}
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			if err := json.Unmarshal(raw, &docs); err != nil {
				return fmt.Errorf("doc put: input array %d: %w", n, err)
			}
		}
		for _, d := range docs {
			if err := putOne(ctx, s, d, stdout); err != nil {
				return err
			}
		}
	}
}

func putOne(ctx context.Context, s store.Store, raw json.RawMessage, stdout io.Writer) error {
	var env struct {
		ID           string `json:"id"`
		PartitionKey string `json:"partitionKey"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.ID == "" || env.PartitionKey == "" {
		return fmt.Errorf("doc put: a document needs string id and partitionKey (got %.80s)", raw)
	}
	cur, err := s.Get(ctx, env.PartitionKey, env.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if _, err := s.Create(ctx, env.PartitionKey, raw); err != nil {
			return fmt.Errorf("creating %s: %w", env.ID, err)
		}
		fmt.Fprintf(stdout, "created  %s\n", env.ID)
	case err != nil:
		return fmt.Errorf("reading %s: %w", env.ID, err)
	default:
		if _, err := s.Replace(ctx, env.PartitionKey, env.ID, raw, cur.ETag); err != nil {
			return fmt.Errorf("replacing %s: %w", env.ID, err)
		}
		fmt.Fprintf(stdout, "replaced %s\n", env.ID)
	}
	return nil
}

// docList prints one document per line.
func docList(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := command("doc list", "(-subscription SUB | -active)", "Prints documents, one per line.")
	sub := fs.String("subscription", "", "list every live document of this subscription")
	active := fs.Bool("active", false, "list active operations (and terminal ones awaiting notification) across subscriptions")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return fmt.Errorf("doc list: unexpected arguments %q", pos)
	case !*active && *sub == "":
		return fmt.Errorf("doc list: pass -subscription SUB or -active")
	case *sub != "":
		if err := checkSubscription("-subscription", *sub); err != nil {
			return err
		}
	}
	print := func(items []store.Item) error {
		for _, it := range items {
			var buf bytes.Buffer
			if err := json.Compact(&buf, it.Body); err != nil {
				return err
			}
			fmt.Fprintln(stdout, buf.String())
		}
		return nil
	}
	return withStore(ctx, getenv, app.ReadOnly, func(s store.Store) error {
		if *active {
			return s.ActiveOperations(ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, print)
		}
		return s.Children(ctx, document.PartitionKey(*sub), "/subscriptions/"+*sub, print)
	})
}

func printIndented(w io.Writer, body []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, buf.String())
	return err
}
