package functionapp

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Binding types this host knows; matching is case-insensitive like the host.
const (
	TypeTimerTrigger    = "timerTrigger"
	TypeCosmosDBTrigger = "cosmosDBTrigger"
	TypeHTTPTrigger     = "httpTrigger"
	TypeHTTP            = "http"
)

// Defaults of the Cosmos DB trigger (extension v4).
const (
	DefaultFeedPollDelay         = 5 * time.Second
	DefaultLeaseContainerName    = "leases"
	DefaultMaxItemsPerInvocation = 100
)

// Function is one folder with a function.json.
type Function struct {
	// Name is the folder name: the path the host posts to.
	Name string
	// Path is the function.json file it was read from.
	Path     string
	Bindings []Binding
	// Retry is the function's own policy, or host.json's when it has none.
	Retry *RetryPolicy
}

// Binding is one entry of function.json's bindings, %SETTING% expanded.
// Only the fields of its own type are set.
type Binding struct {
	Type      string // canonical spelling, e.g. TypeTimerTrigger
	Direction string // "in" or "out"
	Name      string

	// timerTrigger
	Schedule     string
	RunOnStartup bool
	UseMonitor   bool

	// cosmosDBTrigger
	Connection            string
	DatabaseName          string
	ContainerName         string
	LeaseContainerName    string
	LeaseContainerPrefix  string
	MaxItemsPerInvocation int
	FeedPollDelay         time.Duration
	StartFromBeginning    bool
	StartFromTime         time.Time

	// httpTrigger
	AuthLevel string
	Methods   []string // upper case; empty means every method
	Route     string   // without leading slash; the function name when unset
}

// Trigger returns the function's trigger binding.
func (f Function) Trigger() Binding {
	for _, b := range f.Bindings {
		if strings.HasSuffix(strings.ToLower(b.Type), "trigger") {
			return b
		}
	}
	return Binding{}
}

// IsHTTPOnly reports whether the bindings are exactly an httpTrigger in and
// an http out: the only functions the host forwards requests to as is.
func (f Function) IsHTTPOnly() bool {
	if len(f.Bindings) != 2 {
		return false
	}
	var in, out bool
	for _, b := range f.Bindings {
		in = in || (b.Type == TypeHTTPTrigger && b.Direction == "in")
		out = out || (b.Type == TypeHTTP && b.Direction == "out")
	}
	return in && out
}

type functionWire struct {
	Bindings []bindingWire `json:"bindings"`
	Retry    *retryWire    `json:"retry"`
	Disabled any           `json:"disabled"`
}

type bindingWire struct {
	Type      string `json:"type"`
	Direction string `json:"direction"`
	Name      string `json:"name"`

	Schedule     string `json:"schedule"`
	RunOnStartup bool   `json:"runOnStartup"`
	UseMonitor   *bool  `json:"useMonitor"`

	Connection            string `json:"connection"`
	DatabaseName          string `json:"databaseName"`
	ContainerName         string `json:"containerName"`
	LeaseContainerName    string `json:"leaseContainerName"`
	LeaseContainerPrefix  string `json:"leaseContainerPrefix"`
	MaxItemsPerInvocation *int   `json:"maxItemsPerInvocation"`
	FeedPollDelay         *int   `json:"feedPollDelay"`
	StartFromBeginning    bool   `json:"startFromBeginning"`
	StartFromTime         string `json:"startFromTime"`

	AuthLevel string   `json:"authLevel"`
	Methods   []string `json:"methods"`
	Route     *string  `json:"route"`
}

var knownTypes = []string{TypeTimerTrigger, TypeCosmosDBTrigger, TypeHTTPTrigger, TypeHTTP}

// parseFunction decodes an already expanded function.json. Errors name the
// binding and the field.
func parseFunction(name, path string, raw []byte) (Function, error) {
	var w functionWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return Function{}, fmt.Errorf("%s: %w", path, err)
	}
	f := Function{Name: name, Path: path}
	triggers := 0
	for i, bw := range w.Bindings {
		b, err := bw.binding(name)
		if err != nil {
			return Function{}, fmt.Errorf("%s: bindings[%d]: %w", path, i, err)
		}
		if strings.HasSuffix(strings.ToLower(b.Type), "trigger") {
			triggers++
		}
		f.Bindings = append(f.Bindings, b)
	}
	if triggers != 1 {
		return Function{}, fmt.Errorf("%s: %d trigger bindings: want exactly one", path, triggers)
	}
	if w.Retry != nil {
		p, err := w.Retry.policy()
		if err != nil {
			return Function{}, fmt.Errorf("%s: retry: %w", path, err)
		}
		f.Retry = p
	}
	return f, nil
}

func (w bindingWire) binding(function string) (Binding, error) {
	b := Binding{Type: w.Type, Direction: strings.ToLower(w.Direction), Name: w.Name}
	for _, t := range knownTypes {
		if strings.EqualFold(w.Type, t) {
			b.Type = t
		}
	}
	if b.Name == "" {
		return Binding{}, fmt.Errorf("binding of type %q has no name", w.Type)
	}
	if b.Direction != "in" && b.Direction != "out" && b.Direction != "inout" {
		return Binding{}, fmt.Errorf("binding %q: direction %q: want in or out", b.Name, w.Direction)
	}
	switch b.Type {
	case TypeTimerTrigger:
		if w.Schedule == "" {
			return Binding{}, fmt.Errorf("binding %q: schedule is required", b.Name)
		}
		b.Schedule, b.RunOnStartup, b.UseMonitor = w.Schedule, w.RunOnStartup, true
		if w.UseMonitor != nil {
			b.UseMonitor = *w.UseMonitor
		}
	case TypeCosmosDBTrigger:
		if err := w.cosmos(&b); err != nil {
			return Binding{}, fmt.Errorf("binding %q: %w", b.Name, err)
		}
	case TypeHTTPTrigger:
		b.AuthLevel = w.AuthLevel
		for _, m := range w.Methods {
			b.Methods = append(b.Methods, strings.ToUpper(m))
		}
		b.Route = function
		if w.Route != nil {
			b.Route = trimSlashes(*w.Route)
		}
	}
	return b, nil
}

func (w bindingWire) cosmos(b *Binding) error {
	if w.ContainerName == "" {
		return fmt.Errorf("containerName is required")
	}
	b.Connection, b.DatabaseName, b.ContainerName = w.Connection, w.DatabaseName, w.ContainerName
	b.LeaseContainerName, b.LeaseContainerPrefix = w.LeaseContainerName, w.LeaseContainerPrefix
	if b.LeaseContainerName == "" {
		b.LeaseContainerName = DefaultLeaseContainerName
	}
	b.MaxItemsPerInvocation = DefaultMaxItemsPerInvocation
	if n := w.MaxItemsPerInvocation; n != nil {
		if *n < 1 {
			return fmt.Errorf("maxItemsPerInvocation %d: want 1 or more", *n)
		}
		b.MaxItemsPerInvocation = *n
	}
	b.FeedPollDelay = DefaultFeedPollDelay
	if ms := w.FeedPollDelay; ms != nil {
		if *ms < 0 {
			return fmt.Errorf("feedPollDelay %d: want milliseconds, 0 or more", *ms)
		}
		b.FeedPollDelay = time.Duration(*ms) * time.Millisecond
	}
	b.StartFromBeginning = w.StartFromBeginning
	if w.StartFromTime != "" {
		t, err := time.Parse(time.RFC3339, w.StartFromTime)
		if err != nil {
			return fmt.Errorf("startFromTime %q: want ISO 8601 like 2021-02-16T14:19:29Z", w.StartFromTime)
		}
		b.StartFromTime = t
	}
	return nil
}
