package handlers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hcpops/hcpops/auth"
)

// Defaults for Config's zero values.
const (
	DefaultPort            = 8080
	DefaultMaxBodyBytes    = 16 << 20
	DefaultShutdownTimeout = 30 * time.Second
)

// The host tells the handler which port to use through these variables; the
// second is the legacy name and carries the same value.
const (
	EnvCustomHandlerPort = "FUNCTIONS_CUSTOMHANDLER_PORT"
	EnvHTTPWorkerPort    = "FUNCTIONS_HTTPWORKER_PORT"
)

// Config shapes the server. The listen host is always 127.0.0.1: the
// Functions host is the only caller, and it dials loopback.
type Config struct {
	// Port to listen on; 0 picks a free one (tests, local host).
	Port int
	// MaxBodyBytes caps a request body; a larger one is refused with 413.
	MaxBodyBytes int64
	// ShutdownTimeout bounds how long Run waits for in-flight invocations
	// after its context is cancelled before cutting them off.
	ShutdownTimeout time.Duration
	// Auth checks the callers of HTTP-triggered functions; the zero value
	// checks nothing (see auth.FromEnv for the app's default).
	Auth auth.Policy
}

func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	return c
}

// Addr is the address Run listens on.
func (c Config) Addr() string {
	return "127.0.0.1:" + strconv.Itoa(c.Port)
}

// PortFromEnv returns the port the host asked for (FUNCTIONS_CUSTOMHANDLER_PORT,
// then FUNCTIONS_HTTPWORKER_PORT), or fallback (a flag) when neither is set.
// getenv is injected so tests and the local host need no process environment.
func PortFromEnv(getenv func(string) string, fallback int) (int, error) {
	for _, name := range []string{EnvCustomHandlerPort, EnvHTTPWorkerPort} {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return 0, fmt.Errorf("%s=%q is not a TCP port (1-65535)", name, v)
		}
		return p, nil
	}
	if fallback < 0 || fallback > 65535 {
		return 0, fmt.Errorf("port %d is not a TCP port (0-65535)", fallback)
	}
	return fallback, nil
}
