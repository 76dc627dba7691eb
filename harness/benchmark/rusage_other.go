//go:build !unix

package benchmark

import (
	"errors"
	"time"
)

type usage struct {
	User, Sys            time.Duration
	MaxRSS, RusageMaxRSS int64
}

func (u usage) cpu() time.Duration { return u.User + u.Sys }

func readUsage() (usage, error) {
	return usage{}, errors.New("getrusage is not available on this platform")
}
