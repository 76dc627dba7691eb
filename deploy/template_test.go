package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ---- the alert rules of deploy/monitoring.bicep, as the template sends them

// templateAlert is one rule's query as deployed with the template's
// defaults: its file under deploy/alerts/, the let statements the template
// puts in front of it, and the whole text.
type templateAlert struct {
	name   string // the file's base name; "stuck" rules add ":" and their key
	file   string
	params map[string]string // let name -> KQL literal
	query  string
}

func (a templateAlert) param(t *testing.T, name string) string {
	t.Helper()
	v, ok := a.params[name]
	if !ok {
		t.Fatalf("alert %s has no parameter %s (has %v)", a.name, name, a.params)
	}
	return strings.Trim(v, `"`)
}

func (a templateAlert) float(t *testing.T, name string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(a.param(t, name), 64)
	if err != nil {
		t.Fatalf("alert %s: %s = %q is not a number", a.name, name, a.param(t, name))
	}
	return f
}

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bicepDefaults reads main.bicep's scalar parameter defaults (quotes
// dropped) and the stuckAfterMinutes object's entries.
func bicepDefaults(t *testing.T) (scalars map[string]string, stuck map[string]string) {
	t.Helper()
	main := readDeploy(t, "main.bicep")
	scalars = map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^param (\w+) (?:string|int) = (.+)$`).FindAllStringSubmatch(main, -1) {
		scalars[m[1]] = strings.Trim(m[2], "'")
	}
	i := strings.Index(main, "param stuckAfterMinutes object = {\n")
	if i < 0 {
		t.Fatal("main.bicep has no `param stuckAfterMinutes object = {`")
	}
	block, _, ok := strings.Cut(main[i:], "\n}\n")
	if !ok {
		t.Fatal("main.bicep's stuckAfterMinutes object does not end")
	}
	stuck = map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s+'?([a-z.]+)'?: (\d+)$`).FindAllStringSubmatch(block, -1) {
		stuck[m[1]] = m[2]
	}
	return scalars, stuck
}

// templateAlerts assembles every rule's query from monitoring.bicep with
// main.bicep's defaults: one "stuck" rule per stuckAfterMinutes entry.
func templateAlerts(t *testing.T) []templateAlert {
	t.Helper()
	mon := readDeploy(t, "monitoring.bicep")
	scalars, stuck := bicepDefaults(t)
	kinds := bicepMap(t, mon, "stuckKinds")
	requests := bicepMap(t, mon, "stuckRequests")
	query := regexp.MustCompile(`(?m)^\s+query: (?:'(.*)\$\{loadTextContent\('alerts/(\w+)\.kql'\)\}'|loadTextContent\('alerts/(\w+)\.kql'\))$`)
	letLine := regexp.MustCompile(`^let (\w+) = (.+);$`)
	var out []templateAlert
	for _, m := range query.FindAllStringSubmatch(mon, -1) {
		prefix, file := m[1], m[2]
		if file == "" {
			file = m[3]
		}
		body := readDeploy(t, filepath.Join("alerts", file+".kql"))
		expand := func(vars map[string]string) templateAlert {
			p := regexp.MustCompile(`\$\{([\w.]+)\}`).ReplaceAllStringFunc(prefix, func(s string) string {
				name := s[2 : len(s)-1]
				v, ok := vars[name]
				if !ok {
					v, ok = scalars[name]
				}
				if !ok {
					t.Fatalf("alert %s: the template's query uses ${%s}, which has no default", file, name)
				}
				return v
			})
			p = strings.ReplaceAll(p, `\n`, "\n")
			a := templateAlert{name: file, file: file, params: map[string]string{}, query: p + body}
			for _, l := range strings.Split(strings.TrimSuffix(p, "\n"), "\n") {
				if l == "" {
					continue
				}
				lm := letLine.FindStringSubmatch(l)
				if lm == nil {
					t.Fatalf("alert %s: the template prefixes %q, not a let statement", file, l)
				}
				a.params[lm[1]] = lm[2]
			}
			return a
		}
		if file != "stuck" {
			out = append(out, expand(nil))
			continue
		}
		for key, minutes := range stuck {
			kind, request := "", ""
			if key != "any" {
				k, r, _ := strings.Cut(key, ".")
				kind, request = kinds[k], requests[r]
			}
			a := expand(map[string]string{"r.kind": kind, "r.request": request, "r.minutes": minutes})
			a.name = "stuck:" + key
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b templateAlert) int { return strings.Compare(a.name, b.name) })
	return out
}

// bicepMap reads a `var name = { key: 'value' ... }` of the template.
func bicepMap(t *testing.T, bicep, name string) map[string]string {
	t.Helper()
	i := strings.Index(bicep, "var "+name+" = {\n")
	if i < 0 {
		t.Fatalf("monitoring.bicep has no var %s", name)
	}
	block, _, ok := strings.Cut(bicep[i:], "\n}\n")
	if !ok {
		t.Fatalf("monitoring.bicep's var %s does not end", name)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(\w+): '([^']*)'$`).FindAllStringSubmatch(block, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func findAlert(t *testing.T, alerts []templateAlert, name string) templateAlert {
	t.Helper()
	for _, a := range alerts {
		if a.name == name {
			return a
		}
	}
	t.Fatalf("no alert rule %s in the template", name)
	return templateAlert{}
}
