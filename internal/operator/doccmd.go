package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hcpops/hcpops/core/document"
	"github.com/hcpops/hcpops/core/store"
	"github.com/hcpops/hcpops/internal/cli"
)

// doc reads and loads raw documents in the configured store (embedded or
// Cosmos): for inspecting a database and for seeding fixtures.
func doc(ctx context.Context, env Env, args []string) error {
	stdout := env.Stdout
	docAbout := "Reads and loads raw documents in the store: " + env.About + "."
	const synopsis = "get ID | put [FILE|-] | list (-subscription SUB | -active)"
	if len(args) == 0 {
		return fmt.Errorf("usage: %s doc %s", env.Prog, synopsis)
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, "usage: "+env.Prog+" doc "+synopsis+"\n\n"+docAbout+"\n\n'"+env.Prog+" doc get|put|list -h' for each.")
		return cli.ErrHelp
	case "get":
		fs := cli.Command(env.Prog+" doc get", "ID", "Prints a document. ID is an ARM resource ID, an operation's status path or URL, or\n"+
			"(with -subscription) a document's Cosmos id or an operation's UUID, as doc list prints them.\n"+docAbout)
		subscription := fs.String("subscription", "", "the subscription (partition) of a bare Cosmos id or operation UUID")
		pos, err := cli.Parse(fs, rest, stdout)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return cli.UsageError(fs, "ID")
		}
		refs, err := docRefs(pos[0], *subscription)
		if err != nil {
			return err
		}
		return withStore(ctx, env, false, false, func(s store.Store) error { return docGet(ctx, s, pos[0], refs, stdout) })
	case "put":
		fs := cli.Command(env.Prog+" doc put", "[FILE|-]", "Creates each document, or replaces it under its current etag. Input: one JSON document,\n"+
			"a JSON array, or one document per line; - or nothing reads stdin. All or nothing: every\n"+
			"document is read and checked before the first is written, then each partition's documents\n"+
			"are written in one transactional batch (more past Cosmos DB's 100-document, 2 MB batch\n"+
			"limits). Batches on other partitions cannot roll back with a failed one: the error then\n"+
			"names exactly what was written. An operation or resource document is parsed as the poll\n"+
			"tick parses it (times, enums, ids): one it cannot parse is refused, naming the field and\n"+
			"value, unless -unchecked.")
		create := new(bool)
		if env.Local {
			fs.BoolVar(create, "create", false, "create the embedded store when none exists and no hcpops process runs on the data dir")
		}
		unchecked := fs.Bool("unchecked", false, "write operation and resource documents the poll tick cannot parse (to see how it copes); by default they are refused")
		pos, err := cli.Parse(fs, rest, stdout)
		if err != nil {
			return err
		}
		if len(pos) > 1 {
			return cli.UsageError(fs, "[FILE|-]")
		}
		raw, err := readDocuments(pos, env.Stdin)
		if err != nil {
			return err
		}
		docs, err := checkPut(raw, *unchecked)
		if err != nil {
			return err
		}
		return withStore(ctx, env, true, *create, func(s store.Store) error { return docPut(ctx, s, docs, stdout) })
	case "list":
		return docList(ctx, env, rest)
	default:
		return fmt.Errorf("unknown subcommand %q (want get, put or list)", sub)
	}
}

// withStore runs fn on the build's store and closes it.
func withStore(ctx context.Context, env Env, write, create bool, fn func(store.Store) error) error {
	s, _, err := env.Connect(ctx, write, create)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// docRefs turns what a person may paste into the documents it can name,
// most likely first.
func docRefs(arg, sub string) ([]store.DocRef, error) {
	if !strings.HasPrefix(arg, "/") && !strings.Contains(arg, "://") {
		if sub == "" {
			return nil, fmt.Errorf("ID %q is not a resource ID: pass -subscription SUB with a Cosmos id or operation UUID", arg)
		}
		if err := CheckSubscription("-subscription", sub); err != nil {
			return nil, err
		}
		pk := document.PartitionKey(sub)
		refs := []store.DocRef{{PartitionKey: pk, ID: arg}}
		if name, ok := document.CanonicalUUID(arg); ok {
			refs = append(refs, store.DocRef{PartitionKey: pk, ID: document.CosmosID(document.OperationResourceID(sub, name))})
		}
		return refs, nil
	}
	if ref, err := ParseOperationRef(arg, sub); err == nil {
		return []store.DocRef{{PartitionKey: ref.PK(), ID: ref.ID()}}, nil
	}
	rid, err := document.ParseResourceID("ID", arg)
	if err != nil {
		return nil, err
	}
	if err := CheckSubscription("ID's subscription", rid.SubscriptionID); err != nil {
		return nil, err
	}
	return []store.DocRef{{PartitionKey: document.PartitionKey(rid.SubscriptionID), ID: document.CosmosID(arg)}}, nil
}

func docGet(ctx context.Context, s store.Store, arg string, refs []store.DocRef, stdout io.Writer) error {
	for _, r := range refs {
		item, err := s.Get(ctx, r.PartitionKey, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", arg, err)
		}
		return printIndented(stdout, item.Body)
	}
	return fmt.Errorf("no document %s in partition %s (deleted, expired, or never written)", arg, refs[0].PartitionKey)
}

// readDocuments reads put's input whole and checks every document, so bad
// input changes nothing. Errors name the input and the line and column.
func readDocuments(args []string, stdin io.Reader) ([]json.RawMessage, error) {
	name, in := "stdin", stdin
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return nil, err
		}
		defer f.Close()
		name, in = args[0], f
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []json.RawMessage
	for {
		start := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", position(name, data, errorOffset(err, data)), err)
		}
		at := start + int64(len(data[start:])-len(bytes.TrimLeft(data[start:], " \t\r\n")))
		one := []json.RawMessage{raw}
		if bytes.HasPrefix(raw, []byte("[")) {
			if err := json.Unmarshal(raw, &one); err != nil {
				return nil, fmt.Errorf("%s: %w", position(name, data, at), err)
			}
		}
		for _, d := range one {
			if err := checkEnvelope(d); err != nil {
				return nil, fmt.Errorf("%s: %w", position(name, data, at), err)
			}
		}
		docs = append(docs, one...)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s holds no documents (empty, or an empty array): nothing to put", name)
	}
	return docs, nil
}

func errorOffset(err error, data []byte) int64 {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 {
		return se.Offset - 1 // the offending byte, not the one after it
	}
	return int64(len(data)) // unexpected EOF: the input ended inside a document
}

// position renders a byte offset as name:line:column (both from 1).
func position(name string, data []byte, off int64) string {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

func checkEnvelope(raw json.RawMessage) error {
	var env struct {
		ID           string `json:"id"`
		PartitionKey string `json:"partitionKey"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.ID == "" || env.PartitionKey == "" {
		return fmt.Errorf("a document needs string id and partitionKey (got %.80s)", raw)
	}
	return nil
}

// docList prints one document per line.
func docList(ctx context.Context, env Env, args []string) error {
	stdout := env.Stdout
	fs := cli.Command(env.Prog+" doc list", "(-subscription SUB | -active)", "Prints documents, one per line.")
	sub := fs.String("subscription", "", "list every live document in this subscription's partition (with or without a resourceID)")
	active := fs.Bool("active", false, "list active operations (and terminal ones awaiting notification) across subscriptions")
	pos, err := cli.Parse(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return fmt.Errorf("list: unexpected arguments %q", pos)
	case !*active && *sub == "":
		return errors.New("list: pass -subscription SUB or -active")
	case *active && *sub != "":
		return errors.New("list: -subscription and -active select different documents; pass one (" + env.Prog + " ops -active -subscription SUB lists a subscription's active operations)")
	case *sub != "":
		if err := CheckSubscription("-subscription", *sub); err != nil {
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
	return withStore(ctx, env, false, false, func(s store.Store) error {
		if *active {
			return s.ActiveOperations(ctx, store.ActiveOperationsQuery{WithPendingNotification: true}, print)
		}
		return s.Partition(ctx, document.PartitionKey(*sub), print)
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
