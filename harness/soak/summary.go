package soak

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hcpops/hcpops/core/arm"
)

// outcomeColumns are the summary's columns, in ARM's terminal states, then
// what never finished.
var outcomeColumns = []string{string(arm.ProvisioningStateSucceeded), string(arm.ProvisioningStateFailed),
	string(arm.ProvisioningStateCanceled), "unfinished"}

// report is the summary's numbers besides the evidence.
type report struct {
	seed       uint64
	took       time.Duration
	spikes     int
	simFaults  int // injected faults by the simulator's own ledger
	writes     [3]int
	goroutines [2]int
	logPath    string
}

// summarize prints what the run did and how it ended.
func summarize(w io.Writer, e evidence, r report, problems []string) {
	fmt.Fprintf(w, "soak: %d operations (%d requests of %d kinds, %d implicit) in %s, seed %d\n",
		len(e.ops), len(e.subs), len(kindsOf(e.subs)), implicitCount(e), r.took.Round(100*time.Millisecond), r.seed)

	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  %s\t%s\t\n", "operations by kind", strings.Join(outcomeColumns, "\t"))
	table := outcomes(e)
	rows := make([]string, 0, len(table))
	for k := range table {
		rows = append(rows, k)
	}
	sort.Strings(rows)
	for _, kind := range rows {
		cells := make([]string, len(outcomeColumns))
		for i, c := range outcomeColumns {
			cells[i] = fmt.Sprint(table[kind][c])
		}
		fmt.Fprintf(tw, "  %s\t%s\t\n", kind, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()

	st := e.cs.statuses
	total := 0
	for _, n := range st {
		total += n
	}
	fmt.Fprintf(w, "  clusters service  %d requests; injected faults %d (429 x%d, 500 x%d, 503 x%d), %d unanswered (hung or given up), %d latency spikes\n",
		total, r.simFaults, st[http.StatusTooManyRequests], st[http.StatusInternalServerError], st[http.StatusServiceUnavailable], e.cs.unanswered(), r.spikes)
	objects := e.cs.objects("cluster") + e.cs.objects("nodepool") + e.cs.objects("externalauth")
	fmt.Fprintf(w, "                    objects created: %d clusters, %d node pools, %d external auths; duplicate creates: %d; 409s adopted: %d; credentials issued: %d\n",
		e.cs.objects("cluster"), e.cs.objects("nodepool"), e.cs.objects("externalauth"), len(e.cs.duplicateCreates()), e.cs.adopted(), len(e.cs.creds))
	n, onTime, latest := sickStats(e)
	fmt.Fprintf(w, "  sick subset       %d objects (%.1f%% of CS objects): %d requests hung, %d garbled; %d of %d Failed at their deadline, latest %s after it\n",
		e.sick.size(), percent(e.sick.size(), objects+e.sick.size()-e.sickCreated()), e.sickHung, e.sickGarbled, onTime, n, latest.Round(time.Millisecond))
	if e.wantLies {
		fmt.Fprintf(w, "  lying lists       %d of %d id searches listed every object twice, the copy failed\n", e.lyingLists, e.idSearches)
	}
	for _, cw := range e.windows {
		fmt.Fprintf(w, "  CS %-14s %s window from %s on: %d requests answered in CS's place\n", cw.fault, cw.length, cw.at.Round(time.Millisecond), e.windowAnswered[cw.fault])
	}
	checked, early := e.falseTerminals()
	fmt.Fprintf(w, "  CS's word         %d terminal states of clusters, node pools and external auths CS had: %d on CS's own word about the object, %d without it; %d CS objects at the end, %d no resource names\n",
		checked, checked-len(early), len(early), len(e.csObjects), len(e.orphans()))
	if e.wantCosmosFaults {
		fmt.Fprintf(w, "  store faults      429/503/408/slow by kind: %s\n", cosmosFaultLine(e.cosmosFaults))
	}
	delivered := 0
	for k, uri := range e.notificationURIs() {
		if uri != "" && e.ops[k] != nil && e.ops[k].Properties.NotificationURI == "" {
			delivered++
		}
	}
	fmt.Fprintf(w, "  notifications     %d POSTs, %d failed by the sink (%.0f%%); %d URIs notified and cleared\n",
		e.notifyAttempts, e.notifyFailures, percent(e.notifyFailures, e.notifyAttempts), delivered)
	fmt.Fprintf(w, "  change feed       %d batches, %d deliveries (%d duplicates), %d held back behind the next batch; %d invocations failed, taking %s\n",
		e.feed.Batches, e.feed.Deliveries, e.feed.Duplicated, e.feed.Reordered, e.failedInvocations, e.failedTook.Round(100*time.Millisecond))
	ticks, longest, over := tickStats(e.ticks)
	fmt.Fprintf(w, "  handler           %d `hcpops serve` instances: %d SIGKILLs, %d starts; %d ticks, longest %s (budget %s), %d over budget\n",
		e.instances, e.kills, e.starts, ticks, longest.Round(time.Millisecond), pollBudget, over)
	docs := len(e.writes)
	fmt.Fprintf(w, "  store             %d acknowledged writes (%d creates, %d replaces, %d deletes) to %d documents\n",
		r.writes[0]+r.writes[1]+r.writes[2], r.writes[0], r.writes[1], r.writes[2], docs)
	fmt.Fprintf(w, "  goroutines        %d before, %d after\n", r.goroutines[0], r.goroutines[1])
	if r.logPath != "" {
		fmt.Fprintf(w, "  logs              %s\n", r.logPath)
	}
	if len(problems) == 0 {
		fmt.Fprintln(w, "soak: every invariant held")
		return
	}
	fmt.Fprintf(w, "soak: %d problems\n", len(problems))
	for _, p := range capPerArea(problems, 15) {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

// outcomes counts operations by kind and final status; implicit deletes
// are their own rows.
func outcomes(e evidence) map[string]map[string]int {
	table := map[string]map[string]int{}
	count := func(kind, col string) {
		if table[kind] == nil {
			table[kind] = map[string]int{}
		}
		table[kind][col]++
	}
	mine := map[docKey]bool{}
	for _, s := range e.subs {
		col := "unfinished"
		if op := e.ops[s.op]; s.problem == "" && op != nil && op.Properties.Status.IsTerminal() {
			col = string(op.Properties.Status)
		}
		if s.problem == "" {
			mine[s.op] = true
		}
		count(s.kind, col)
	}
	for k, op := range e.ops {
		if mine[k] {
			continue
		}
		col := "unfinished"
		if op.Properties.Status.IsTerminal() {
			col = string(op.Properties.Status)
		}
		count("implicit delete", col)
	}
	return table
}

func implicitCount(e evidence) int {
	n := len(e.ops)
	for _, s := range e.subs {
		if s.problem == "" && e.ops[s.op] != nil {
			n--
		}
	}
	return n
}

func kindsOf(subs []*submitted) []string {
	var out []string
	for _, s := range subs {
		if !slices.Contains(out, s.kind) {
			out = append(out, s.kind)
		}
	}
	return out
}

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// capPerArea keeps the first n problems of each area and says how many
// more there were.
func capPerArea(problems []string, n int) []string {
	seen := map[string]int{}
	var out []string
	for _, p := range problems {
		area, _, _ := strings.Cut(p, ":")
		seen[area]++
		if seen[area] <= n {
			out = append(out, p)
		}
	}
	var areas []string
	for a := range seen {
		areas = append(areas, a)
	}
	sort.Strings(areas)
	for _, a := range areas {
		if seen[a] > n {
			out = append(out, fmt.Sprintf("%s: ... and %d more", a, seen[a]-n))
		}
	}
	return out
}
