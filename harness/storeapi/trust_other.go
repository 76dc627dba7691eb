//go:build !unix

package storeapi

import "errors"

var errNoTrust = errors.New("the advert cannot be checked on this system: the CLI opens the store file itself")

func readTrusted(string) ([]byte, error) { return nil, errNoTrust }
func processAlive(int) error             { return errNoTrust }
func probeLock(string) error             { return errNoTrust }

// takeLock has no flock to take here; the advert is not trusted anyway.
func takeLock(string) (func(), error) { return func() {}, nil }
