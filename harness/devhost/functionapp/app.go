// Package functionapp reads a Functions app's script root the way the
// Functions host does: host.json, one folder per function with its
// function.json, and %SETTING% references resolved from app settings.
package functionapp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// App is a loaded script root.
type App struct {
	Root string
	Host HostJSON
	// Functions are the enabled functions, sorted by name.
	Functions []Function
	// Disabled names functions switched off by AzureWebJobs.<name>.Disabled
	// or function.json's "disabled".
	Disabled []string
}

// Function returns the named function.
func (a *App) Function(name string) (Function, bool) {
	for _, f := range a.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// LookupFunc finds an app setting; it is os.LookupEnv in production.
type LookupFunc func(name string) (string, bool)

// Load reads host.json and every <folder>/function.json under root. Folders
// directly under root are the layout the host deploys; functions/<folder> is
// this repository's source layout, so a checkout runs without packaging.
func Load(root string, lookup LookupFunc) (*App, error) {
	raw, err := os.ReadFile(filepath.Join(root, "host.json"))
	if err != nil {
		return nil, fmt.Errorf("reading host.json from script root %s: %w", root, err)
	}
	host, err := ParseHostJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("script root %s: %w", root, err)
	}
	app := &App{Root: root, Host: host}

	var paths []string
	for _, pattern := range []string{"*/function.json", "functions/*/function.json"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, fmt.Errorf("listing functions under %s: %w", root, err)
		}
		paths = append(paths, found...)
	}
	seen := map[string]string{}
	for _, path := range paths {
		name := filepath.Base(filepath.Dir(path))
		if prev, dup := seen[strings.ToLower(name)]; dup {
			return nil, fmt.Errorf("function %q is defined twice: %s and %s", name, prev, path)
		}
		seen[strings.ToLower(name)] = path
		fn, disabled, err := loadFunction(name, path, lookup)
		if err != nil {
			return nil, err
		}
		if disabled {
			app.Disabled = append(app.Disabled, name)
			continue
		}
		if fn.Retry == nil && host.Retry != nil {
			fn.Retry = host.Retry
		}
		app.Functions = append(app.Functions, fn)
	}
	if len(app.Functions)+len(app.Disabled) == 0 {
		return nil, fmt.Errorf("script root %s has no <function>/function.json", root)
	}
	slices.SortFunc(app.Functions, func(a, b Function) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(app.Disabled)
	return app, nil
}

func loadFunction(name, path string, lookup LookupFunc) (Function, bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Function{}, false, fmt.Errorf("reading function %s: %w", name, err)
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return Function{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if truthy(tree["disabled"]) {
		return Function{}, true, nil
	}
	if v, ok := lookup("AzureWebJobs." + name + ".Disabled"); ok && truthy(v) {
		return Function{}, true, nil
	}
	if err := expandTree(tree, "", lookup); err != nil {
		return Function{}, false, fmt.Errorf("%s: %w", path, err)
	}
	expanded, err := json.Marshal(tree)
	if err != nil {
		return Function{}, false, fmt.Errorf("%s: %w", path, err)
	}
	fn, err := parseFunction(name, path, expanded)
	return fn, false, err
}

func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		return err == nil && b
	}
	return false
}

// expandTree replaces %NAME% in every string of the tree. field is the JSON
// path so far, for the error.
func expandTree(node any, field string, lookup LookupFunc) error {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if s, ok := v.(string); ok {
				out, err := Expand(s, lookup)
				if err != nil {
					return fmt.Errorf("%s: %w", join(field, k), err)
				}
				n[k] = out
				continue
			}
			if err := expandTree(v, join(field, k), lookup); err != nil {
				return err
			}
		}
	case []any:
		for i, v := range n {
			at := fmt.Sprintf("%s[%d]", field, i)
			if s, ok := v.(string); ok {
				out, err := Expand(s, lookup)
				if err != nil {
					return fmt.Errorf("%s: %w", at, err)
				}
				n[i] = out
				continue
			}
			if err := expandTree(v, at, lookup); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// ErrUnresolved marks a %NAME% with no app setting behind it.
var ErrUnresolved = errors.New("app setting is not set")

// Expand resolves every %NAME% in s from app settings, as the host resolves
// binding properties; a lone '%' is kept.
func Expand(s string, lookup LookupFunc) (string, error) {
	var b strings.Builder
	for {
		start := strings.IndexByte(s, '%')
		if start < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		end := strings.IndexByte(s[start+1:], '%')
		if end < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		name := s[start+1 : start+1+end]
		b.WriteString(s[:start])
		if name == "" || strings.ContainsAny(name, " \t") {
			b.WriteString(s[start : start+2+end])
		} else {
			v, ok := lookup(name)
			if !ok {
				return "", fmt.Errorf("%%%s%%: %w", name, ErrUnresolved)
			}
			b.WriteString(v)
		}
		s = s[start+2+end:]
	}
}

// Settings layers app-settings sources: the first that has a name wins.
// Core Tools puts the process environment before local.settings.json.
func Settings(sources ...map[string]string) LookupFunc {
	return func(name string) (string, bool) {
		for _, src := range sources {
			if v, ok := src[name]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// EnvironMap returns the process environment as a map.
func EnvironMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// LocalSettings reads local.settings.json's Values; a missing file is no
// settings, not an error.
func LocalSettings(root string) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(root, "local.settings.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading local.settings.json: %w", err)
	}
	var w struct {
		Values map[string]any `json:"Values"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("local.settings.json: %w", err)
	}
	out := make(map[string]string, len(w.Values))
	for k, v := range w.Values {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("local.settings.json: Values.%s is %T: values must be strings", k, v)
		}
		out[k] = s
	}
	return out, nil
}
