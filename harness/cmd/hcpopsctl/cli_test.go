package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const cliSub = "1d3378d3-5a3f-4712-85a1-2485495dfc4b"

func cliCluster(name string) string {
	return "/subscriptions/" + cliSub + "/resourceGroups/demo/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

// oneLine checks a failed command printed one error line naming its
// command once, with no cause repeated.
func oneLine(t *testing.T, r result, cmd string) string {
	t.Helper()
	msg := strings.TrimSpace(r.stderr)
	if r.code != 1 || strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "hcpopsctl "+cmd+": ") || strings.Contains(msg, "hcpopsctl: hcpopsctl") {
		t.Errorf("hcpopsctl %s: exit %d, stderr %q; want one line starting %q", cmd, r.code, r.stderr, "hcpopsctl "+cmd+": ")
	}
	for _, m := range regexp.MustCompile(`([a-z][a-z ]{6,}[a-z]): `).FindAllStringSubmatch(msg, -1) {
		if strings.Count(msg, m[1]) > 1 && strings.Contains(msg, m[1]+": "+m[1]) {
			t.Errorf("%q repeats %q", msg, m[1])
		}
	}
	return msg
}

// What ARO-HCP's frontend refuses, submit refuses, naming the flag and the
// value, before it touches a store: no data dir is created.
func TestSubmitRefusesWhatTheFrontendRefuses(t *testing.T) {
	w := newWorkspace(t)
	np := cliCluster("demo") + "/nodePools/np1"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-resource", cliCluster("demo") + "/nodePools"}, `-resource "` + cliCluster("demo") + `/nodePools": the node pool name is missing after /nodePools`},
		{[]string{"-resource", cliCluster("bad name!")}, `cluster name "bad name!": at most 54 letters, digits and '-'`},
		{[]string{"-resource", np, "-replicas", "-3"}, `-replicas "-3": must be between 0 and 200 (properties.replicas)`},
		{[]string{"-resource", np, "-version", "4.20.3"}, `-version "4.20.3": must be at least 4.20.8`},
		{[]string{"-resource", cliCluster("demo"), "-notification-uri", "not-a-url"}, `-notification-uri "not-a-url": want an absolute http(s) URL`},
		{[]string{"-resource", cliCluster("demo"), "-channel-group", "nightly"}, `-channel-group "nightly": want one of stable, fast`},
		{[]string{"-resource", cliCluster("demo"), "-managed-resource-group", "demo"}, `-managed-resource-group "demo": must not be the cluster's own resource group`},
		{[]string{"-resource", cliCluster("demo") + "/externalAuths/ea", "-issuer-url", "http://issuer"}, `-issuer-url "http://issuer": must be https URL`},
		{[]string{"-resource", cliCluster("demo"), "-tenant", "me"}, `-tenant "me": not a UUID`},
		{[]string{"-resource", np, "-request", "request-credential"}, "only a cluster takes it, and -resource names a node pool"},
		{[]string{"-resource", cliCluster("demo"), "-request", "patch"}, `-request "patch": want create, update, delete, request-credential, revoke-credentials`},
		{[]string{"-resource", np, "-replicas", "-3", "-channel-group", "x"}, `-channel-group "x": want one of stable, fast (properties.version.channelGroup); -replicas "-3"`},
	}
	for _, c := range cases {
		r := w.hcpops(t, "", append([]string{"submit", "-create"}, c.args...)...)
		if msg := oneLine(t, r, "submit"); !strings.Contains(msg, c.want) {
			t.Errorf("submit %v:\n  %s\nwant it to contain\n  %s", c.args, msg, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".data")); !os.IsNotExist(err) {
		t.Errorf("a refused submit created the data dir: %v", err)
	}
}

// The CLI never writes where nothing listens without saying so; update
// and delete of a missing resource write nothing; a dead dev's front door
// is not advertised.
func TestSubmitWhereNothingListens(t *testing.T) {
	w := newWorkspace(t)
	r := w.hcpops(t, "", "submit", "-resource", cliCluster("demo"))
	msg := oneLine(t, r, "submit")
	for _, want := range []string{"no store at .data/store.db", "no running hcpopsctl dev or serve", "start `make run`", "-create creates a new store there"} {
		if !strings.Contains(msg, want) {
			t.Errorf("submit with nothing running: %q lacks %q", msg, want)
		}
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".data")); !os.IsNotExist(err) {
		t.Fatalf("submit without -create created the data dir: %v", err)
	}
	r = w.hcpops(t, "", "submit", "-create", "-resource", cliCluster("demo"))
	if r.code != 0 || !strings.Contains(r.stdout, "waiting   no hcpopsctl dev or serve runs on .data: the operation waits in .data/store.db") {
		t.Fatalf("submit -create: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"-request", "update", "-resource", cliCluster("other")}},
		{[]string{"-request", "delete", "-resource", cliCluster("other")}},
		{[]string{"-request", "update", "-resource", cliCluster("demo") + "/nodePools/np1"}},
	} {
		r := w.hcpops(t, "", append([]string{"submit"}, c.args...)...)
		if msg := oneLine(t, r, "submit"); !strings.Contains(msg, "resource not found") || !strings.Contains(msg, "nothing") {
			t.Errorf("submit %v: %q", c.args, msg)
		}
	}
	list := w.hcpops(t, "", "doc", "list", "-subscription", cliSub)
	if n := strings.Count(list.stdout, "\n"); n != 2 {
		t.Errorf("after one create and three refusals the store holds %d documents, want 2:\n%s", n, list.stdout)
	}

	// A dev that dies leaves its advert; submit then opens the file and
	// says nothing processes it, and prints no curl to the dead door.
	d := w.startDev(t)
	r = w.hcpops(t, "", "submit", "-resource", cliCluster("live"))
	if !strings.Contains(r.stdout, "curl      curl -s") || !strings.Contains(r.stdout, d.front) {
		t.Errorf("submit beside a live dev prints no curl:\n%s", r.stdout)
	}
	d.kill(t)
	r = w.hcpops(t, "", "submit", "-resource", cliCluster("after"))
	if r.code != 0 || strings.Contains(r.stdout, "curl ") || !strings.Contains(r.stdout, "waiting   no hcpopsctl dev or serve runs on .data") {
		t.Errorf("submit after dev was killed: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// status takes what submit and the terminal print; doc get what doc list
// prints; doc put refuses empty and malformed input, naming file, line and
// column; conflicting flags are refused; each error names its thing once.
func TestCommandsTakeWhatTheyPrint(t *testing.T) {
	w := newWorkspace(t)
	d := w.startDev(t)
	r := w.hcpops(t, "", "submit", "-resource", cliCluster("demo"))
	path := regexp.MustCompile(`(?m)^statusURL (\S+)$`).FindStringSubmatch(r.stdout)
	curl := regexp.MustCompile(`'(http://\S+)'`).FindStringSubmatch(r.stdout)
	if path == nil || curl == nil {
		t.Fatalf("submit printed:\n%s%s", r.stdout, r.stderr)
	}
	name := path[1][strings.LastIndex(path[1], "/")+1:]
	for _, args := range [][]string{
		{"status", path[1]},
		{"status", curl[1]}, // the curl's URL, host and ?api-version included
		{"status", path[1] + "?api-version=2024-06-10-preview"},
		{"status", name, "-subscription", cliSub},
		{"status", strings.Replace(path[1], "hcpOperationStatuses", "hcpOperationResults", 1)},
	} {
		r := w.hcpops(t, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, `"name": "`+name+`"`) {
			t.Errorf("hcpops %v: %d %s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if msg := oneLine(t, w.hcpops(t, "", "status", strings.Replace(path[1], name, "not-a-uuid", 1)), "status"); !strings.Contains(msg, `its id "not-a-uuid" is not a UUID`) {
		t.Errorf("non-UUID operation: %q", msg)
	}
	if msg := oneLine(t, w.hcpops(t, "", "status", "6e34c52d-4115-4834-abff-933590456a6e", "-subscription", cliSub), "status"); !strings.Contains(msg, "not found in subscription") {
		t.Errorf("missing operation: %q", msg)
	}

	// doc get takes the ids doc list prints, and says "not found" once.
	list := w.hcpops(t, "", "doc", "list", "-subscription", cliSub)
	for _, line := range strings.Split(strings.TrimSpace(list.stdout), "\n") {
		var doc struct{ ID, ResourceID string }
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("doc list line %q: %v", line, err)
		}
		for _, args := range [][]string{{"doc", "get", doc.ID, "-subscription", cliSub}, {"doc", "get", doc.ResourceID}} {
			if r := w.hcpops(t, "", args...); r.code != 0 || !strings.Contains(r.stdout, `"id": "`+doc.ID+`"`) {
				t.Errorf("hcpops %v: %d %s%s", args, r.code, r.stdout, r.stderr)
			}
		}
	}
	if msg := oneLine(t, w.hcpops(t, "", "doc", "get", cliCluster("nope")), "doc"); strings.Count(msg, "not found") > 1 || !strings.Contains(msg, "no document") {
		t.Errorf("doc get of a missing document: %q", msg)
	}
	if msg := oneLine(t, w.hcpops(t, "", "doc", "list", "-subscription", cliSub, "-active"), "doc"); !strings.Contains(msg, "-subscription and -active select different documents") {
		t.Errorf("conflicting flags: %q", msg)
	}

	bad := filepath.Join(w.dir, "bad.json")
	empty := filepath.Join(w.dir, "empty.json")
	for file, body := range map[string]string{bad: "{\"id\": \"a\", \"partitionKey\": \"p\"}\n{\"id\": \"b\",\n  \"partitionKey\": oops}\n", empty: ""} {
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		file, stdin, want string
	}{
		{bad, "", "bad.json:3:19: invalid character 'o' looking for beginning of value"},
		{empty, "", "empty.json holds no documents"},
		{"-", "[]", "stdin holds no documents"},
		{"-", `{"id":"x"}`, "stdin:1:1: a document needs string id and partitionKey"},
		{"-", `{"id":"x","partitionKey":"p"`, "stdin:1:29: unexpected EOF"},
	} {
		r := w.hcpops(t, c.stdin, "doc", "put", c.file)
		if msg := oneLine(t, r, "doc"); !strings.Contains(msg, c.want) {
			t.Errorf("doc put %s (%q): %q, want %q", c.file, c.stdin, msg, c.want)
		}
	}
	if r := w.hcpops(t, "", "doc", "get", "a", "-subscription", cliSub); r.code == 0 {
		t.Errorf("the first document of a bad file was written")
	}
	_ = d
}

// Every command's -h exits 0 and describes each of its flags.
func TestEveryHelpDescribesItsFlags(t *testing.T) {
	w := newWorkspace(t)
	for _, c := range []struct {
		args  []string
		flags []string
	}{
		{[]string{"-h"}, []string{"ops", "history", "cs-simulator"}},
		{[]string{"submit", "-h"}, []string{"-resource", "-request", "-replicas", "-notification-uri", "-create"}},
		{[]string{"status", "-h"}, []string{"-subscription"}},
		{[]string{"ops", "-h"}, []string{"-active", "-subscription", "-o", "ops fail|cancel"}},
		{[]string{"ops", "fail", "-h"}, []string{"-reason", "-by", "-subscription", "OperationAbandoned", "docs/runbooks.md"}},
		{[]string{"ops", "cancel", "-h"}, []string{"-reason", "-by", "Canceled"}},
		{[]string{"history", "-h"}, []string{"docs/operating.md"}},
		{[]string{"doc", "put", "-h"}, []string{"-create"}},
		{[]string{"doc", "get", "-h"}, []string{"-subscription"}},
		{[]string{"doc", "list", "-h"}, []string{"-active", "-subscription"}},
		{[]string{"cs-simulator", "-h"}, []string{"-listen", "-error-rate", "-hang-rate", "/_sim/"}},
		{[]string{"dev", "-h"}, []string{"-cs-addr", "-data-dir", "-v"}},
		{[]string{"serve", "-h"}, []string{"-port"}},
	} {
		r := w.hcpops(t, "", c.args...)
		if r.code != 0 || !strings.Contains(r.stdout, "usage: hcpops") {
			t.Errorf("hcpops %v: exit %d\n%s%s", c.args, r.code, r.stdout, r.stderr)
			continue
		}
		for _, f := range c.flags {
			if !strings.Contains(r.stdout, f) {
				t.Errorf("hcpops %v does not describe %s:\n%s", c.args, f, r.stdout)
			}
		}
	}
}
