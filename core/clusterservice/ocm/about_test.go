package ocm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// TestAnswerIsAboutTheObjectAsked: a single-object GET's 2xx answer is
// CS's word only when it is a JSON object whose id is the one asked and
// whose href, when it has one, is the path asked; anything else (another
// object's genuine answer, {}, HTML, no id) is an unrecognized answer,
// counted as cs_unrecognized, naming what came back and never quoting the
// body. The answer asked for still reads.
func TestAnswerIsAboutTheObjectAsked(t *testing.T) {
	a, b := clusterID(1), clusterID(2)
	hrefA, hrefB := cs.ClusterHref(a), cs.ClusterHref(b)
	npB := cs.NodePoolHref(hrefB, "np1")
	eaB := cs.ExternalAuthHref(hrefB, "ea1")
	credB := cs.ClustersMgmtPrefix + "/clusters/" + b + cs.BreakGlassSegment + "cr1"
	const json, html = "application/json", "text/html"
	reads := []struct {
		name string
		do   func(context.Context, *Client) error
		path string // what the read asks for
		id   string
	}{
		{"cluster", func(ctx context.Context, c *Client) error { _, err := c.GetCluster(ctx, hrefB); return err }, hrefB, b},
		{"cluster status", func(ctx context.Context, c *Client) error { _, err := c.GetClusterStatus(ctx, hrefB); return err }, hrefB + "/status", b},
		{"node pool", func(ctx context.Context, c *Client) error { _, err := c.GetNodePool(ctx, npB); return err }, npB, "np1"},
		{"node pool status", func(ctx context.Context, c *Client) error { _, err := c.GetNodePoolStatus(ctx, npB); return err }, npB + "/status", "np1"},
		{"external auth", func(ctx context.Context, c *Client) error { _, err := c.GetExternalAuth(ctx, eaB); return err }, eaB, "ea1"},
		{"break-glass credential", func(ctx context.Context, c *Client) error {
			_, err := c.GetBreakGlassCredential(ctx, credB)
			return err
		}, credB, "cr1"},
	}
	for _, rd := range reads {
		for _, tc := range []struct {
			name, ctype, body string
			ok                bool
			names             string // what the error must name
		}{
			{"its own answer", json, fmt.Sprintf(`{"kind":"X","id":%q,"href":%q}`, rd.id, rd.path), true, ""},
			{"its own id, no href", json, fmt.Sprintf(`{"kind":"X","id":%q}`, rd.id), true, ""},
			{"another object's answer", json, fmt.Sprintf(`{"kind":"X","id":%q,"href":%q}`, a, hrefA), false, a},
			{"its id under another href", json, fmt.Sprintf(`{"kind":"X","id":%q,"href":%q}`, rd.id, strings.Replace(rd.path, b, a, 1)), false, "/clusters/" + a},
			{"{}", json, `{}`, false, "without an id"},
			{"HTML", html, `<html><body>ok</body></html>`, false, "not JSON"},
			{"empty", json, ``, false, "empty body"},
			{"an array", json, `[]`, false, "not a JSON object"},
		} {
			t.Run(rd.name+"/"+tc.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", tc.ctype)
					fmt.Fprint(w, tc.body)
				}))
				defer srv.Close()
				rec := cs.NewRecorder(nil, invocationOf)
				c := connect(t, Config{URL: srv.URL, Recorder: rec})
				ctx := context.WithValue(context.Background(), invocationKey{}, "inv")
				done := rec.Count(ctx)
				err := rd.do(ctx, c)
				s := done()
				if tc.ok {
					if err != nil || s.Unrecognized != 0 {
						t.Fatalf("err = %v, %d unrecognized; want the answer read", err, s.Unrecognized)
					}
					return
				}
				if cs.Classify(err) != cs.Unrecognized {
					t.Fatalf("err = %v (class %s), want unrecognized", err, cs.Classify(err))
				}
				if s.Unrecognized != 1 || s.Count != 1 {
					t.Fatalf("recorded %+v, want the one request counted unrecognized", s)
				}
				if msg := err.Error(); !strings.Contains(msg, rd.path) || !strings.Contains(msg, tc.names) ||
					tc.ctype == html && strings.Contains(msg, "<html>") {
					t.Fatalf("error %q must name what was asked (%s) and what came back (%s), never the body", msg, rd.path, tc.names)
				}
			})
		}
	}
}

// TestListItemsAboutAnotherObject: a list whose items lie under another
// object's path (a cache that served cluster A's policies for B's) is no
// evidence; items under the path asked are read.
func TestListItemsAboutAnotherObject(t *testing.T) {
	a, b := cs.ClusterHref(clusterID(1)), cs.ClusterHref(clusterID(2))
	for _, tc := range []struct {
		name, itemHref string
		ok             bool
	}{
		{"its own", b + "/control_plane_upgrade_policies/p1", true},
		{"another cluster's", a + "/control_plane_upgrade_policies/p1", false},
		{"an id that is not its href's", b + "/control_plane_upgrade_policies/p2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"kind":"ControlPlaneUpgradePolicyList","page":1,"size":1,"total":1,"items":[{"kind":"ControlPlaneUpgradePolicy","id":"p1","href":%q,"upgrade_type":"ControlPlane","version":"4.20.1","state":{"value":"started"}}]}`, tc.itemHref)
			}))
			defer srv.Close()
			p, err := connect(t, Config{URL: srv.URL}).ListControlPlaneUpgradePolicies(context.Background(), b)
			if tc.ok {
				if err != nil || len(p) != 1 {
					t.Fatalf("policies %v, %v; want the one", p, err)
				}
				return
			}
			if cs.Classify(err) != cs.Unrecognized || !strings.Contains(err.Error(), "another object") {
				t.Fatalf("err = %v, want an unrecognized answer about another object", err)
			}
		})
	}
}

// TestBatchedItemAboutAnotherObject: the tick's batched lists take an
// item only when its href is the object asked: a list that a cache keyed
// without the cluster served for another cluster (node pool np1 of A for
// np1 of B, the same name) is no evidence, counted as unrecognized; its
// objects are then read with their own GETs.
func TestBatchedItemAboutAnotherObject(t *testing.T) {
	l, _, e := newLiar(t)
	rec := cs.NewRecorder(nil, invocationOf)
	srv := httptest.NewServer(l)
	defer srv.Close()
	c := connect(t, Config{URL: srv.URL, Recorder: rec})
	cluster := e.readyCluster(t, 1)
	np, err := c.PostNodePool(e.ctx, cluster, nodePoolSpec())
	if err != nil {
		t.Fatal(err)
	}
	ea, err := c.PostExternalAuth(e.ctx, cluster, cs.ExternalAuthSpec{ID: "entra", IssuerURL: "https://login.microsoftonline.com/t/v2.0", Audiences: []string{"aud"}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute)
	other := clusterID(7)
	lists := []struct {
		name string
		do   func(ctx context.Context) (int, error)
	}{
		{"clusters", func(ctx context.Context) (int, error) {
			m, err := c.ListClustersByHref(ctx, []string{cluster})
			return len(m), err
		}},
		{"node pools", func(ctx context.Context) (int, error) {
			m, err := c.ListNodePoolsByHref(ctx, cluster, []string{cs.NodePoolHref(cluster, np.ID)})
			return len(m), err
		}},
		{"external auths", func(ctx context.Context) (int, error) {
			m, err := c.ListExternalAuthsByHref(ctx, cluster, []string{cs.ExternalAuthHref(cluster, ea.ID)})
			return len(m), err
		}},
	}
	for _, ls := range lists {
		t.Run(ls.name, func(t *testing.T) {
			l.set(nil)
			if n, err := ls.do(e.ctx); err != nil || n != 1 {
				t.Fatalf("the honest list: %d, %v; want the one asked", n, err)
			}
			l.set(func(_ map[string]json.RawMessage, items []map[string]any) []map[string]any {
				for _, it := range items {
					it["href"] = strings.Replace(it["href"].(string), clusterID(1), other, 1)
				}
				return items
			})
			ctx := context.WithValue(e.ctx, invocationKey{}, "inv")
			done := rec.Count(ctx)
			n, err := ls.do(ctx)
			s := done()
			noEvidence := errors.Is(err, cs.ErrInconsistentList) || cs.Classify(err) == cs.Unrecognized
			if !noEvidence || n != 0 || !strings.Contains(err.Error(), "another object") {
				t.Fatalf("%d items, %v; want none, the list inconsistent", n, err)
			}
			if s.Unrecognized != 1 {
				t.Fatalf("recorded %+v, want the list counted unrecognized once", s)
			}
		})
	}
}
