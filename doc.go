package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
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
	if len(args) == 0 {
		return fmt.Errorf("usage: hcpops doc get RESOURCE_ID | put [FILE|-] | list (-subscription SUB | -active)")
	}
	s, _, err := app.OpenStore(getenv, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer s.Close()
	switch args[0] {
	case "get":
		return docGet(ctx, s, args[1:], stdout)
	case "put":
		return docPut(ctx, s, args[1:], stdin, stdout)
	case "list":
		return docList(ctx, s, args[1:], stdout)
	default:
		return fmt.Errorf("doc: unknown subcommand %q (want get, put or list)", args[0])
	}
}

func docGet(ctx context.Context, s store.Store, args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: hcpops doc get RESOURCE_ID (an ARM resource ID or operation status path)")
	}
	id := args[0]
	rid, err := document.ParseResourceID("RESOURCE_ID", id)
	if err != nil {
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
func docList(ctx context.Context, s store.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("doc list", flag.ContinueOnError)
	sub := fs.String("subscription", "", "list every live document of this subscription")
	active := fs.Bool("active", false, "list active operations (and terminal ones awaiting notification) across subscriptions")
	if err := fs.Parse(args); err != nil {
		return err
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
	switch {
	case *active:
		return s.ActiveOperations(ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, print)
	case *sub != "":
		if _, err := document.ParseResourceID("-subscription", document.SubscriptionResourceID(*sub)); err != nil {
			return err
		}
		return s.Children(ctx, document.PartitionKey(*sub), "/subscriptions/"+*sub, print)
	default:
		return fmt.Errorf("doc list: pass -subscription SUB or -active")
	}
}

func printIndented(w io.Writer, body []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, buf.String())
	return err
}
