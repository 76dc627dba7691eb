package simulator

import (
	"fmt"
	"slices"
	"strings"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// search is a parsed CS search expression: the subset of its SQL-like
// language that callers of this project send. Terms are "field = 'v'" and
// "field in ('a', 'b')", joined by "and" and "or" (and binds tighter), with
// parentheses. The zero value matches everything.
type search struct {
	// any holds the alternatives ("or"); each is a conjunction ("and") of
	// terms. Parentheses are expanded into this form while parsing.
	alts [][]term
}

// term is one "field = 'v'" or "field in (...)" comparison.
type term struct {
	field  string
	values []string // one for "="
}

// clusterFields are the cluster fields the simulator can search on: the
// ones dispatch uses to adopt a cluster, plus id and name.
var clusterFields = map[string]func(*arohcp.Cluster) string{
	"id":                                (*arohcp.Cluster).ID,
	"name":                              (*arohcp.Cluster).Name,
	"azure.subscription_id":             func(c *arohcp.Cluster) string { return c.Azure().SubscriptionID() },
	"azure.resource_group_name":         func(c *arohcp.Cluster) string { return c.Azure().ResourceGroupName() },
	"azure.resource_name":               func(c *arohcp.Cluster) string { return c.Azure().ResourceName() },
	"azure.tenant_id":                   func(c *arohcp.Cluster) string { return c.Azure().TenantID() },
	"azure.managed_resource_group_name": func(c *arohcp.Cluster) string { return c.Azure().ManagedResourceGroupName() },
}

// nodePoolFields are the node pool fields the simulator can search on.
var nodePoolFields = map[string]func(*nodePool) string{
	"id": func(np *nodePool) string { return np.id },
}

// maxSearchTerms bounds the expanded expression, so a hostile mix of
// parentheses cannot make the simulator multiply terms without end.
const maxSearchTerms = 10000

// parseSearch parses expr, accepting only the fields in known.
func parseSearch[T any](expr string, known map[string]func(T) string) (search, error) {
	p := &searchParser{rest: expr, known: func(f string) bool { _, ok := known[f]; return ok }}
	if strings.TrimSpace(expr) == "" {
		return search{}, nil
	}
	alts, err := p.or()
	if err != nil {
		return search{}, err
	}
	if r := strings.TrimSpace(p.rest); r != "" {
		return search{}, fmt.Errorf("expected 'and' or 'or' before %q", r)
	}
	return search{alts: alts}, nil
}

type searchParser struct {
	rest  string
	known func(string) bool
}

func (p *searchParser) or() ([][]term, error) {
	out, err := p.and()
	for err == nil && p.keyword("or") {
		var next [][]term
		if next, err = p.and(); err == nil {
			out = append(out, next...)
		}
	}
	if err == nil && len(out) > maxSearchTerms {
		err = fmt.Errorf("expression expands to more than %d alternatives", maxSearchTerms)
	}
	return out, err
}

// and returns the conjunction of its operands, distributed over any "or"
// inside parentheses.
func (p *searchParser) and() ([][]term, error) {
	out, err := p.operand()
	for err == nil && p.keyword("and") {
		var next [][]term
		if next, err = p.operand(); err != nil {
			break
		}
		if len(out)*len(next) > maxSearchTerms {
			return nil, fmt.Errorf("expression expands to more than %d alternatives", maxSearchTerms)
		}
		var product [][]term
		for _, a := range out {
			for _, b := range next {
				product = append(product, append(slices.Clip(a), b...))
			}
		}
		out = product
	}
	return out, err
}

func (p *searchParser) operand() ([][]term, error) {
	p.rest = strings.TrimSpace(p.rest)
	if strings.HasPrefix(p.rest, "(") {
		p.rest = p.rest[1:]
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.rest = strings.TrimSpace(p.rest); !strings.HasPrefix(p.rest, ")") {
			return nil, fmt.Errorf("expected ')' at %q", p.rest)
		}
		p.rest = p.rest[1:]
		return inner, nil
	}
	field, after, ok := cutWord(p.rest)
	if !ok {
		return nil, fmt.Errorf("expected a field name at %q", p.rest)
	}
	if !p.known(field) {
		return nil, fmt.Errorf("unsupported search field %q", field)
	}
	p.rest = strings.TrimSpace(after)
	switch {
	case strings.HasPrefix(p.rest, "="):
		v, after, err := cutQuoted(strings.TrimSpace(p.rest[1:]))
		if err != nil {
			return nil, fmt.Errorf("value of %s: %w", field, err)
		}
		p.rest = after
		return [][]term{{{field: field, values: []string{v}}}}, nil
	case p.keyword("in"):
		values, err := p.list(field)
		if err != nil {
			return nil, err
		}
		return [][]term{{{field: field, values: values}}}, nil
	}
	return nil, fmt.Errorf("expected '=' or 'in' after %q", field)
}

// list parses "('a', 'b', ...)".
func (p *searchParser) list(field string) ([]string, error) {
	if p.rest = strings.TrimSpace(p.rest); !strings.HasPrefix(p.rest, "(") {
		return nil, fmt.Errorf("expected '(' after %s in", field)
	}
	p.rest = p.rest[1:]
	var values []string
	for {
		v, after, err := cutQuoted(strings.TrimSpace(p.rest))
		if err != nil {
			return nil, fmt.Errorf("value of %s: %w", field, err)
		}
		values = append(values, v)
		p.rest = strings.TrimSpace(after)
		switch {
		case strings.HasPrefix(p.rest, ","):
			p.rest = p.rest[1:]
		case strings.HasPrefix(p.rest, ")"):
			p.rest = p.rest[1:]
			return values, nil
		default:
			return nil, fmt.Errorf("expected ',' or ')' in the list of %s at %q", field, p.rest)
		}
	}
}

// keyword consumes word (any case) if it comes next as a whole word.
func (p *searchParser) keyword(word string) bool {
	w, after, ok := cutWord(p.rest)
	if !ok || !strings.EqualFold(w, word) {
		return false
	}
	p.rest = after
	return true
}

// cutWord splits off a leading identifier (letters, digits, '_' and '.').
func cutWord(s string) (word, rest string, ok bool) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			i++
			continue
		}
		break
	}
	return s[:i], s[i:], i > 0
}

// cutQuoted splits off a leading single-quoted string; a doubled quote
// inside stands for one.
func cutQuoted(s string) (value, rest string, err error) {
	if !strings.HasPrefix(s, "'") {
		return "", "", fmt.Errorf("expected a single-quoted string at %q", s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", fmt.Errorf("unterminated string %q", s)
}

// matchSearch reports whether obj satisfies s. ARM identifiers are
// case-insensitive, so the comparison is too.
func matchSearch[T any](s search, obj T, fields map[string]func(T) string) bool {
	if len(s.alts) == 0 {
		return true
	}
	for _, all := range s.alts {
		if slices.IndexFunc(all, func(t term) bool { return !t.match(fields[t.field](obj)) }) < 0 {
			return true
		}
	}
	return false
}

func (t term) match(v string) bool {
	return slices.ContainsFunc(t.values, func(want string) bool { return strings.EqualFold(v, want) })
}

// ids returns the distinct values the expression compares id with, and
// whether every alternative is bound to them, so only objects with those
// ids can match and a list can look them up instead of scanning.
func (s search) ids() (ids []string, bound bool) {
	seen := map[string]bool{}
	bound = len(s.alts) > 0
	for _, all := range s.alts {
		has := false
		for _, t := range all {
			if t.field != "id" {
				continue
			}
			has = true
			for _, v := range t.values {
				if k := strings.ToLower(v); !seen[k] {
					seen[k] = true
					ids = append(ids, k)
				}
			}
		}
		bound = bound && has
	}
	return ids, bound
}
