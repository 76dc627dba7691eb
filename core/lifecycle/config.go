package lifecycle

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/core/activeset"
	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clock"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/store"
)

// Notifier delivers an ARM async notification; notification.Notifier
// satisfies it. An error wrapping notification.ErrNotAllowed means the URI
// will never be called, so the engine drops it instead of retrying.
type Notifier interface {
	Notify(ctx context.Context, uri string, status arm.OperationStatus) error
}

// Deps are the engine's collaborators; all but Logger and Random are
// required.
type Deps struct {
	Store          store.Store
	ClusterService clusterservice.Client
	// Calls is the Recorder the ClusterService client's transport records
	// into: the engine reads CS's health from it and counts each tick's
	// and batch's requests.
	Calls    *clusterservice.Recorder
	Notifier Notifier
	Clock    clock.Clock
	Logger   *slog.Logger
	// Random feeds every random choice: cluster IDs and the relist
	// jitter; nil means crypto/rand.
	Random io.Reader
}

// Config tunes the engine. Zero values mean the defaults of DefaultConfig.
type Config struct {
	// PollConcurrency bounds the operations a tick (or a dispatch batch)
	// works on at once.
	PollConcurrency int
	// DispatchGrace is how long after startTime the tick waits for the
	// change feed before it dispatches an operation itself.
	DispatchGrace time.Duration
	// PendingIDGrace is how long a cluster's pending ID is left to the
	// dispatch that chose it (which may still be POSTing) before another
	// dispatch adopts or POSTs it.
	PendingIDGrace time.Duration
	// CreateDeadline applies when a resource has no
	// createOperationCompletionDeadline.
	CreateDeadline time.Duration
	// DeleteDeadline applies when a resource has no
	// deleteOperationCompletionDeadline.
	DeleteDeadline time.Duration
	// UpgradeDeadline bounds an update's version change from its start:
	// past it, an upgrade CS has not completed fails with CS's word on it.
	UpgradeDeadline time.Duration
	// NotifyBackoffBase and NotifyBackoffMax space the retries of a failed
	// ARM notification: base, 2*base, 4*base ... capped at max.
	NotifyBackoffBase time.Duration
	NotifyBackoffMax  time.Duration
	// NotifyScheduleSize bounds the in-memory retry schedule.
	NotifyScheduleSize int
	// PollBackoffBase and PollBackoffMax space the CS calls of an operation
	// whose calls keep failing or timing out: base, 2*base ... capped at
	// max; a call that succeeds resets it. Deadlines are still checked
	// every tick meanwhile.
	PollBackoffBase time.Duration
	PollBackoffMax  time.Duration
	// WriteTimeout bounds a store write made after a CS call failed or
	// the tick's budget ran out (an expiry, a status seen just in time):
	// such a write gets its own context instead of the spent one.
	WriteTimeout time.Duration
	// PageSize is the page size of the active-operations query.
	PageSize int
	// CSBatchSize is how many CS objects of a page one list call reads;
	// 1 turns batching off (one GET per object, for a CS that turns out
	// not to fill status in list items). Batches never span pages.
	CSBatchSize int
	// StuckAfter is when an active operation counts as stuck, per (kind,
	// request), with StuckAny as the backstop for all (stuck.go); entries
	// left out keep DefaultStuckAfter's.
	StuckAfter map[StuckKey]time.Duration
	// RelistInterval is how long the tick's change-fed view of the active
	// set serves before it is rebuilt from a full read (plus up to 30%,
	// drawn each time, as ARO-HCP's informers).
	RelistInterval time.Duration
	// AbsenceWindow is how long CS's own 404 for a delete's object must
	// persist, read again and again, to complete the delete when no list
	// answer shows live witnesses beside it (absence.go).
	AbsenceWindow time.Duration
	// SweepVersions runs the version sweep on each tick. ConfigFromEnv
	// turns it on (the Function App's configuration) unless
	// HCPOPS_VERSION_SWEEP is "off"; a Config built in code sweeps only
	// when it says so, so a test that counts a tick's calls counts its own.
	SweepVersions bool
	// VersionSweepInterval is how often the version sweep starts a full
	// pass over the container (versionsweep.go); VersionSweepPageSize is
	// how many documents of the change feed it reads a tick.
	VersionSweepInterval time.Duration
	VersionSweepPageSize int
}

// Defaults.
const (
	// A full version sweep every 10 minutes, 100 documents a tick: a
	// container of 60,000 documents is passed over in 100 minutes at the
	// 10 s timer, and CS's upgrade paths reach the channel lists within a
	// pass.
	DefaultVersionSweepInterval = 10 * time.Minute
	DefaultVersionSweepPageSize = 100
	DefaultPollConcurrency      = 32
	DefaultDispatchGrace        = 60 * time.Second
	DefaultPendingIDGrace       = 60 * time.Second
	DefaultCreateDeadline       = 60 * time.Minute
	DefaultDeleteDeadline       = 12 * time.Hour
	DefaultUpgradeDeadline      = 4 * time.Hour
	DefaultNotifyBackoffBase    = 15 * time.Second
	DefaultNotifyBackoffMax     = 15 * time.Minute
	DefaultNotifyScheduleSize   = 10000
	DefaultPageSize             = 100
	// The poll backoff starts at one timer period (10s) and stays within
	// a few minutes, well inside the default create deadline.
	DefaultPollBackoffBase = 10 * time.Second
	DefaultPollBackoffMax  = 5 * time.Minute
	DefaultWriteTimeout    = 10 * time.Second
	DefaultCSBatchSize     = 100
	DefaultRelistInterval  = activeset.DefaultRelist
	// DefaultAbsenceWindow: longer than a bad rollout's misroute is
	// noticed and rolled back, short beside a real uninstall's 10 to 30
	// minutes (docs/settings.md argues it).
	DefaultAbsenceWindow = 10 * time.Minute
	// MaxCSBatchSize keeps a list call's id search (about 50 bytes an id,
	// URL-encoded) well inside the 16 KB request line proxies accept.
	MaxCSBatchSize = 200
)

// Setting names read by ConfigFromEnv.
const (
	EnvPollConcurrency   = "HCPOPS_POLL_CONCURRENCY"
	EnvDispatchGrace     = "HCPOPS_DISPATCH_GRACE"
	EnvPendingIDGrace    = "HCPOPS_PENDING_ID_GRACE"
	EnvCreateDeadline    = "HCPOPS_CREATE_DEADLINE"
	EnvDeleteDeadline    = "HCPOPS_DELETE_DEADLINE"
	EnvUpgradeDeadline   = "HCPOPS_UPGRADE_DEADLINE"
	EnvNotifyBackoffBase = "HCPOPS_NOTIFY_BACKOFF_BASE"
	EnvNotifyBackoffMax  = "HCPOPS_NOTIFY_BACKOFF_MAX"
	EnvPollBackoffMax    = "HCPOPS_POLL_BACKOFF_MAX"
	// EnvVersionSweep turns the version sweep off ("off"); on by default.
	EnvVersionSweep   = "HCPOPS_VERSION_SWEEP"
	EnvCSBatchSize    = "HCPOPS_CS_BATCH_SIZE"
	EnvRelistInterval = "HCPOPS_RELIST_INTERVAL"
	EnvAbsenceWindow  = "HCPOPS_ABSENCE_WINDOW"
)

// field is one Config field in the table below: its name for errors, the
// environment setting that sets it ("" for none), its default and its
// upper bound (0 for none).
type field[T int | time.Duration] struct {
	name, env string
	p         *T
	def, max  T
}

// fields is the one table of Config: every default, every setting
// ConfigFromEnv reads and every range check come from it.
func (c *Config) fields() []configField {
	type (
		n = field[int]
		d = field[time.Duration]
	)
	return []configField{
		n{"PollConcurrency", EnvPollConcurrency, &c.PollConcurrency, DefaultPollConcurrency, 0},
		d{"DispatchGrace", EnvDispatchGrace, &c.DispatchGrace, DefaultDispatchGrace, 0},
		d{"PendingIDGrace", EnvPendingIDGrace, &c.PendingIDGrace, DefaultPendingIDGrace, 0},
		d{"CreateDeadline", EnvCreateDeadline, &c.CreateDeadline, DefaultCreateDeadline, 0},
		d{"DeleteDeadline", EnvDeleteDeadline, &c.DeleteDeadline, DefaultDeleteDeadline, 0},
		d{"UpgradeDeadline", EnvUpgradeDeadline, &c.UpgradeDeadline, DefaultUpgradeDeadline, 0},
		d{"NotifyBackoffBase", EnvNotifyBackoffBase, &c.NotifyBackoffBase, DefaultNotifyBackoffBase, 0},
		d{"NotifyBackoffMax", EnvNotifyBackoffMax, &c.NotifyBackoffMax, DefaultNotifyBackoffMax, 0},
		n{"NotifyScheduleSize", "", &c.NotifyScheduleSize, DefaultNotifyScheduleSize, 0},
		n{"PageSize", "", &c.PageSize, DefaultPageSize, 0},
		d{"PollBackoffBase", "", &c.PollBackoffBase, DefaultPollBackoffBase, 0},
		d{"PollBackoffMax", EnvPollBackoffMax, &c.PollBackoffMax, DefaultPollBackoffMax, 0},
		d{"WriteTimeout", "", &c.WriteTimeout, DefaultWriteTimeout, 0},
		n{"CSBatchSize", EnvCSBatchSize, &c.CSBatchSize, DefaultCSBatchSize, MaxCSBatchSize},
		d{"RelistInterval", EnvRelistInterval, &c.RelistInterval, DefaultRelistInterval, 0},
		d{"AbsenceWindow", EnvAbsenceWindow, &c.AbsenceWindow, DefaultAbsenceWindow, 0},
		d{"VersionSweepInterval", "", &c.VersionSweepInterval, DefaultVersionSweepInterval, 0},
		n{"VersionSweepPageSize", "", &c.VersionSweepPageSize, DefaultVersionSweepPageSize, 0},
	}
}

type configField interface {
	fill()
	read(getenv func(string) string) error
	check() error
}

// fill sets a zero field to its default.
func (f field[T]) fill() {
	if *f.p == 0 {
		*f.p = f.def
	}
}

// read sets the field from its environment setting, if it has one and it
// is set: a positive integer or duration.
func (f field[T]) read(getenv func(string) string) error {
	if f.env == "" {
		return nil
	}
	v := strings.TrimSpace(getenv(f.env))
	if v == "" {
		return nil
	}
	switch p := any(f.p).(type) {
	case *int:
		n, err := strconv.Atoi(v)
		if f.max > 0 && (err != nil || n <= 0 || T(n) > f.max) {
			return fmt.Errorf("%s=%q: want an integer from 1 to %d", f.env, v, int64(f.max))
		}
		if err != nil || n <= 0 {
			return fmt.Errorf("%s=%q: want a positive integer", f.env, v)
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: want a positive duration such as 90s", f.env, v)
		}
		*p = d
	}
	return nil
}

func (f field[T]) check() error {
	if *f.p < 0 {
		return fmt.Errorf("lifecycle config %s: %d is negative", f.name, int64(*f.p))
	}
	if f.max > 0 && *f.p > f.max {
		return fmt.Errorf("lifecycle config %s: %d is above %d", f.name, int64(*f.p), int64(f.max))
	}
	return nil
}

// DefaultConfig is the configuration with every default filled in.
func DefaultConfig() Config { return Config{}.withDefaults() }

// Settings are the lifecycle settings as getenv has them: every name
// ConfigFromEnv reads, "" for an unset one, and nothing else. A process
// records them so that the operator CLI judges operations (stuck,
// deadlines, when ARM is told next) as the process does, not as the
// CLI's shell would; an unset one is kept, so a shell cannot fill it in.
func Settings(getenv func(string) string) map[string]string {
	set := map[string]string{}
	_, _ = ConfigFromEnv(func(k string) string { // a bad value stops the process first
		set[k] = getenv(k)
		return set[k]
	})
	return set
}

// ConfigFromEnv reads the HCPOPS_* lifecycle settings on top of the
// defaults; each error names the setting and its value, and every bad one
// is named.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	var errs []error // every bad setting is named at once
	for _, f := range c.fields() {
		errs = append(errs, f.read(getenv))
	}
	switch v := strings.TrimSpace(getenv(EnvVersionSweep)); v {
	case "", "on":
		c.SweepVersions = true
	case "off":
	default:
		errs = append(errs, fmt.Errorf("%s=%q: want on or off", EnvVersionSweep, v))
	}
	stuck, stuckErr := parseStuckAfter(getenv(EnvStuckAfter))
	if err := errors.Join(append(errs, stuckErr)...); err != nil {
		return Config{}, err
	}
	c.StuckAfter = stuck
	// Only the cap is a setting; a cap below the default base is the base.
	c.PollBackoffBase = min(c.PollBackoffBase, c.PollBackoffMax)
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// withDefaults fills zero fields from the table; a poll backoff base given
// above the default cap raises the cap, a cap given below the default base
// lowers the base.
func (c Config) withDefaults() Config {
	base, ceiling := c.PollBackoffBase, c.PollBackoffMax
	for _, f := range c.fields() {
		f.fill()
	}
	if ceiling == 0 {
		c.PollBackoffMax = max(c.PollBackoffMax, base)
	}
	if base == 0 {
		c.PollBackoffBase = min(c.PollBackoffBase, c.PollBackoffMax)
	}
	stuck := DefaultStuckAfter()
	maps.Copy(stuck, c.StuckAfter)
	c.StuckAfter = stuck
	return c
}

func (c Config) validate() error {
	for _, f := range c.fields() {
		if err := f.check(); err != nil {
			return err
		}
	}
	if c.NotifyBackoffMax < c.NotifyBackoffBase {
		return fmt.Errorf("lifecycle config NotifyBackoffMax: %s is below NotifyBackoffBase %s", c.NotifyBackoffMax, c.NotifyBackoffBase)
	}
	if c.PollBackoffMax < c.PollBackoffBase {
		return fmt.Errorf("lifecycle config PollBackoffMax: %s is below PollBackoffBase %s", c.PollBackoffMax, c.PollBackoffBase)
	}
	for k, d := range c.StuckAfter {
		if d <= 0 {
			return fmt.Errorf("lifecycle config StuckAfter[%s]: %s is not positive", k, d)
		}
	}
	return nil
}

// New builds an engine. It holds no global state: everything it keeps
// (locks, the notification retry schedule) lives in the returned value.
func New(deps Deps, cfg Config) (*Engine, error) {
	var missing []string
	if deps.Store == nil {
		missing = append(missing, "Store")
	}
	if deps.ClusterService == nil {
		missing = append(missing, "ClusterService")
	}
	if deps.Calls == nil {
		missing = append(missing, "Calls")
	}
	if deps.Notifier == nil {
		missing = append(missing, "Notifier")
	}
	if deps.Clock == nil {
		missing = append(missing, "Clock")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("lifecycle deps: %s required", strings.Join(missing, ", "))
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Random == nil {
		deps.Random = rand.Reader
	}
	e := &Engine{
		writer:       newWriter(deps.Store, deps.Notifier, deps.Clock, deps.Logger, cfg),
		cs:           deps.ClusterService,
		calls:        deps.Calls,
		random:       deps.Random,
		cfg:          cfg,
		locks:        newKeyedLock(),
		pollAt:       newBackoff(cfg.PollBackoffBase, cfg.PollBackoffMax, cfg.NotifyScheduleSize),
		skips:        newSkipLog(cfg.NotifyScheduleSize),
		unrecognized: newSkipLog(cfg.NotifyScheduleSize),
		held:         newSkipLog(cfg.NotifyScheduleSize),
		overdue:      newSkipLog(cfg.NotifyScheduleSize),
		stuck:        newStuckWatch(),
		unconfirmed:  newUnconfirmed(),
		absence:      newAbsences(),
		witness:      newWitnesses(),
		resent:       newResends(),
	}
	e.versions = newVersionSweep(deps.Store, deps.ClusterService, deps.Logger, cfg.VersionSweepInterval,
		cfg.VersionSweepPageSize, cfg.CSBatchSize)
	e.handlers = e.registry()
	view, err := activeset.New(activeset.Config{Store: deps.Store, ResourceOf: resourceRef, Clock: deps.Clock,
		Relist: cfg.RelistInterval, Jitter: jitterFrom(deps.Random), Logger: deps.Logger})
	if err != nil {
		return nil, err
	}
	e.view = view
	return e, nil
}

// jitterFrom is ARO-HCP's relist jitter, up to 30% of the interval, drawn
// from random: a seeded reader makes a run replayable.
func jitterFrom(random io.Reader) func(time.Duration) time.Duration {
	return func(d time.Duration) time.Duration {
		var b [8]byte
		if _, err := io.ReadFull(random, b[:]); err != nil {
			return 0
		}
		return time.Duration(binary.LittleEndian.Uint64(b[:]) % uint64(int64(d)*3/10+1))
	}
}
