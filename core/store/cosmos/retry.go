package cosmos

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// unavailableRetry retries reads that end in 503 Service Unavailable.
//
// azcore's retry policy (configured by retryOptions) handles 429, but on a
// single-region account azcosmos marks a 503 non-retriable before azcore
// sees it, so without this policy a transient 503 reaches the caller at
// once. Writes are left alone on purpose: a 503 write may have been
// committed, and replaying it would turn success into 409 or 412.
type unavailableRetry struct {
	opts policy.RetryOptions
}

func (p unavailableRetry) Do(req *policy.Request) (*http.Response, error) {
	for try := int32(0); ; try++ {
		if err := req.RewindBody(); err != nil {
			return nil, err
		}
		resp, err := req.Clone(req.Raw().Context()).Next()
		if !isRead(req.Raw()) || !isUnavailable(resp, err) || try >= p.opts.MaxRetries {
			return resp, err
		}
		delay := p.delay(resp, try)
		if delay < 0 {
			return resp, err // the service asked for more than MaxRetryDelay
		}
		if resp != nil {
			runtime.Drain(resp)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-req.Raw().Context().Done():
			t.Stop()
			return nil, req.Raw().Context().Err()
		}
	}
}

// delay honours the service's retry-after, else backs off exponentially;
// negative means give up.
func (p unavailableRetry) delay(resp *http.Response, try int32) time.Duration {
	if resp != nil {
		if ms, err := strconv.Atoi(resp.Header.Get("x-ms-retry-after-ms")); err == nil && ms >= 0 {
			d := time.Duration(ms) * time.Millisecond
			if d > p.opts.MaxRetryDelay {
				return -1
			}
			return d
		}
	}
	d := p.opts.RetryDelay << min(try, 16)
	return min(d, p.opts.MaxRetryDelay)
}

func isRead(r *http.Request) bool {
	return r.Method == http.MethodGet ||
		(r.Method == http.MethodPost && strings.EqualFold(r.Header.Get("x-ms-documentdb-isquery"), "true"))
}

func isUnavailable(resp *http.Response, err error) bool {
	if err != nil {
		var re *azcore.ResponseError
		return errors.As(err, &re) && re.StatusCode == http.StatusServiceUnavailable
	}
	return resp != nil && resp.StatusCode == http.StatusServiceUnavailable
}
