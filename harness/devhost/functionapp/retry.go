package functionapp

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retry strategies of function.json's retry section.
const (
	StrategyFixedDelay         = "fixedDelay"
	StrategyExponentialBackoff = "exponentialBackoff"
)

// RetryPolicy is a function's (or the host's) retry section.
type RetryPolicy struct {
	Strategy string
	// MaxRetryCount is the number of retries after the first attempt;
	// -1 retries forever.
	MaxRetryCount int
	// DelayInterval is the fixedDelay pause.
	DelayInterval time.Duration
	// MinimumInterval and MaximumInterval bound exponentialBackoff.
	MinimumInterval time.Duration
	MaximumInterval time.Duration
}

// Delay is the pause before retry number retry (1 for the first retry).
// Exponential backoff doubles from MinimumInterval up to MaximumInterval;
// the real host adds jitter, which a local host has no use for.
func (p RetryPolicy) Delay(retry int) time.Duration {
	if p.Strategy == StrategyFixedDelay {
		return p.DelayInterval
	}
	d := p.MinimumInterval
	for i := 1; i < retry && d < p.MaximumInterval; i++ {
		d *= 2
	}
	return min(d, p.MaximumInterval)
}

// Exhausted reports whether retry number retry would exceed the policy.
func (p RetryPolicy) Exhausted(retry int) bool {
	return p.MaxRetryCount >= 0 && retry > p.MaxRetryCount
}

type retryWire struct {
	Strategy        string `json:"strategy"`
	MaxRetryCount   *int   `json:"maxRetryCount"`
	DelayInterval   string `json:"delayInterval"`
	MinimumInterval string `json:"minimumInterval"`
	MaximumInterval string `json:"maximumInterval"`
}

func (w retryWire) policy() (*RetryPolicy, error) {
	if w.MaxRetryCount == nil {
		return nil, fmt.Errorf("maxRetryCount is required")
	}
	if *w.MaxRetryCount < -1 {
		return nil, fmt.Errorf("maxRetryCount %d: want -1 (forever) or more", *w.MaxRetryCount)
	}
	p := &RetryPolicy{MaxRetryCount: *w.MaxRetryCount}
	var err error
	switch {
	case strings.EqualFold(w.Strategy, StrategyFixedDelay):
		p.Strategy = StrategyFixedDelay
		if p.DelayInterval, err = ParseTimeSpan(w.DelayInterval); err != nil {
			return nil, fmt.Errorf("delayInterval: %w", err)
		}
	case strings.EqualFold(w.Strategy, StrategyExponentialBackoff):
		p.Strategy = StrategyExponentialBackoff
		if p.MinimumInterval, err = ParseTimeSpan(w.MinimumInterval); err != nil {
			return nil, fmt.Errorf("minimumInterval: %w", err)
		}
		if p.MaximumInterval, err = ParseTimeSpan(w.MaximumInterval); err != nil {
			return nil, fmt.Errorf("maximumInterval: %w", err)
		}
		if p.MaximumInterval < p.MinimumInterval {
			return nil, fmt.Errorf("maximumInterval %s is below minimumInterval %s", w.MaximumInterval, w.MinimumInterval)
		}
	default:
		return nil, fmt.Errorf("strategy %q: want %q or %q", w.Strategy, StrategyFixedDelay, StrategyExponentialBackoff)
	}
	return p, nil
}

// ParseTimeSpan parses a .NET TimeSpan as function.json and host.json write
// them: [d.]hh:mm:ss[.fffffff].
func ParseTimeSpan(s string) (time.Duration, error) {
	bad := func() (time.Duration, error) {
		return 0, fmt.Errorf("%q is not a time span like hh:mm:ss", s)
	}
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return bad()
	}
	var days int64
	if d, h, ok := strings.Cut(parts[0], "."); ok {
		n, err := strconv.ParseInt(d, 10, 32)
		if err != nil || n < 0 {
			return bad()
		}
		days, parts[0] = n, h
	}
	var frac time.Duration
	if sec, f, ok := strings.Cut(parts[2], "."); ok {
		if f == "" || len(f) > 7 {
			return bad()
		}
		n, err := strconv.ParseUint(f+strings.Repeat("0", 7-len(f)), 10, 32)
		if err != nil {
			return bad()
		}
		frac, parts[2] = time.Duration(n)*100, sec
	}
	limits := []int64{23, 59, 59}
	var total time.Duration
	units := []time.Duration{time.Hour, time.Minute, time.Second}
	for i, p := range parts {
		if len(p) == 0 || len(p) > 2 {
			return bad()
		}
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 || n > limits[i] {
			return bad()
		}
		total += time.Duration(n) * units[i]
	}
	return total + time.Duration(days)*24*time.Hour + frac, nil
}
