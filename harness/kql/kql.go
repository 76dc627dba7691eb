// Package kql reads the shipped alert queries (deploy/alerts/*.kql) far
// enough for a test to evaluate what they say: event names, windows and
// comparisons, so an edit to a query changes what is tested.
package kql

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Query is what an alert query's shipped text fixes, read from the text
// itself, so a test's Go evaluator of the query can take its constants
// from the file that is deployed (a change there changes what the test
// evaluates) and a test can require that it models everything else the
// text uses. It reads the queries this project writes (the hcpops
// prelude, then Query over its records), not Query in general.
type Query struct {
	// Prelude is the `let hcpops = traces ...;` the query starts with;
	// none of what follows counts it.
	Prelude string
	// Events are the record names compared with msg (== or in), in order
	// of first appearance.
	Events []string
	// Windows are the arguments of ago(), in order of first appearance:
	// a timespan literal (15m) or a parameter's name.
	Windows []string
	// Fields are the record's members the query reads (r.x, r['x']).
	Fields []string
	// Literals are the other string literals; Numbers the numeric and
	// timespan literals outside ago(). Both sorted, each once.
	Literals, Numbers []string
	// Compares holds, for each comparison with a parameter on one side,
	// "left right" and its operator (">=").
	Compares map[string]string
}

var (
	kqlComment = regexp.MustCompile(`(?m)^\s*//.*\n?`)
	kqlPrelude = regexp.MustCompile(`(?s)^\s*let hcpops = traces\b.*?;\n`)
	kqlMsg     = regexp.MustCompile(`\bmsg (?:== "([^"]*)"|in \(([^)]*)\))`)
	kqlAgo     = regexp.MustCompile(`\bago\((\w+)\)`)
	kqlField   = regexp.MustCompile(`\br(?:\.(\w+)|\['(\w+)'\])`)
	kqlString  = regexp.MustCompile(`"([^"]*)"`)
	kqlNumber  = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:[smhd]\b)?`)
	kqlCompare = regexp.MustCompile(`([\w.]+)\s*(>=|<=|==|!=|>|<)\s*([\w.]+)`)
)

// Parse reads text (one shipped .kql file) whose parameters, the
// names the template defines before it, are params.
func Parse(text string, params []string) (Query, error) {
	body := kqlComment.ReplaceAllString(text, "")
	k := Query{Compares: map[string]string{}}
	if p := kqlPrelude.FindString(body); p != "" {
		k.Prelude = strings.TrimSpace(p)
		body = strings.TrimPrefix(strings.TrimSpace(body), k.Prelude)
	} else {
		return k, fmt.Errorf("the query does not start with the hcpops prelude (let hcpops = traces ...;)")
	}
	add := func(list []string, v string) []string {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
		return list
	}
	for _, m := range kqlMsg.FindAllStringSubmatch(body, -1) {
		if m[1] != "" {
			k.Events = add(k.Events, m[1])
			continue
		}
		for _, s := range kqlString.FindAllStringSubmatch(m[2], -1) {
			k.Events = add(k.Events, s[1])
		}
	}
	for _, m := range kqlAgo.FindAllStringSubmatch(body, -1) {
		k.Windows = add(k.Windows, m[1])
	}
	for _, m := range kqlField.FindAllStringSubmatch(body, -1) {
		k.Fields = add(k.Fields, m[1]+m[2])
	}
	for _, m := range kqlString.FindAllStringSubmatch(body, -1) {
		if !slices.Contains(k.Events, m[1]) {
			k.Literals = add(k.Literals, m[1])
		}
	}
	// Numbers outside strings, ago() and names.
	bare := kqlAgo.ReplaceAllString(kqlString.ReplaceAllString(body, `""`), "ago()")
	for _, m := range kqlNumber.FindAllString(bare, -1) {
		k.Numbers = add(k.Numbers, m)
	}
	for _, m := range kqlCompare.FindAllStringSubmatch(bare, -1) {
		if slices.Contains(params, m[1]) || slices.Contains(params, m[3]) {
			k.Compares[m[1]+" "+m[3]] = m[2]
		}
	}
	slices.Sort(k.Fields)
	slices.Sort(k.Literals)
	slices.Sort(k.Numbers)
	return k, nil
}

// Window is the i-th ago() window as a duration; it must be a timespan
// literal.
func (k Query) Window(i int) (time.Duration, error) {
	if i >= len(k.Windows) {
		return 0, fmt.Errorf("the query has %d ago() windows, not %d", len(k.Windows), i+1)
	}
	return Timespan(k.Windows[i])
}

// Compare applies the query's comparison of left with right to a and b;
// an error if the query has none.
func (k Query) Compare(left, right string, a, b float64) (bool, error) {
	op, ok := k.Compares[left+" "+right]
	if !ok {
		return false, fmt.Errorf("the query does not compare %s with %s (it compares %v)", left, right, k.Compares)
	}
	switch op {
	case ">=":
		return a >= b, nil
	case ">":
		return a > b, nil
	case "<=":
		return a <= b, nil
	case "<":
		return a < b, nil
	case "==":
		return a == b, nil
	case "!=":
		return a != b, nil
	}
	return false, fmt.Errorf("comparison %s %s %s: unknown operator", left, op, right)
}

// Timespan reads a Query timespan literal: a number and d, h, m or s.
func Timespan(s string) (time.Duration, error) {
	units := map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}
	if len(s) < 2 || units[s[len(s)-1]] == 0 {
		return 0, fmt.Errorf("timespan %q: want a number and d, h, m or s", s)
	}
	n, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil {
		return 0, fmt.Errorf("timespan %q: %w", s, err)
	}
	return time.Duration(n * float64(units[s[len(s)-1]])), nil
}
