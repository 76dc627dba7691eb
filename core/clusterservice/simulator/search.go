package simulator

import (
	"fmt"
	"strings"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
)

// clause is one "field = 'value'" term of a CS search expression.
type clause struct {
	field string
	value string
}

// searchFields are the cluster fields the simulator can search on: the ones
// dispatch uses to adopt a cluster, plus id and name.
var searchFields = map[string]func(*arohcp.Cluster) string{
	"id":                                (*arohcp.Cluster).ID,
	"name":                              (*arohcp.Cluster).Name,
	"azure.subscription_id":             func(c *arohcp.Cluster) string { return c.Azure().SubscriptionID() },
	"azure.resource_group_name":         func(c *arohcp.Cluster) string { return c.Azure().ResourceGroupName() },
	"azure.resource_name":               func(c *arohcp.Cluster) string { return c.Azure().ResourceName() },
	"azure.tenant_id":                   func(c *arohcp.Cluster) string { return c.Azure().TenantID() },
	"azure.managed_resource_group_name": func(c *arohcp.Cluster) string { return c.Azure().ManagedResourceGroupName() },
}

// parseSearch parses the subset of the CS search language that dispatch
// sends: equality terms joined by "and", values in single quotes (” is an
// escaped quote).
func parseSearch(expr string) ([]clause, error) {
	var out []clause
	rest := strings.TrimSpace(expr)
	for rest != "" {
		if len(out) > 0 {
			word, after, ok := cutWord(rest)
			if !ok || !strings.EqualFold(word, "and") {
				return nil, fmt.Errorf("expected 'and' before %q", rest)
			}
			rest = after
		}
		field, after, ok := cutWord(rest)
		if !ok {
			return nil, fmt.Errorf("expected a field name at %q", rest)
		}
		if _, known := searchFields[field]; !known {
			return nil, fmt.Errorf("unsupported search field %q", field)
		}
		after = strings.TrimSpace(after)
		if !strings.HasPrefix(after, "=") {
			return nil, fmt.Errorf("expected '=' after %q", field)
		}
		value, after, err := cutQuoted(strings.TrimSpace(after[1:]))
		if err != nil {
			return nil, fmt.Errorf("value of %s: %w", field, err)
		}
		out = append(out, clause{field: field, value: value})
		rest = strings.TrimSpace(after)
	}
	return out, nil
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

// cutQuoted splits off a leading single-quoted string.
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

// matches reports whether c satisfies every clause. ARM identifiers are
// case-insensitive, so the comparison is too.
func matches(c *arohcp.Cluster, clauses []clause) bool {
	for _, cl := range clauses {
		if !strings.EqualFold(searchFields[cl.field](c), cl.value) {
			return false
		}
	}
	return true
}
