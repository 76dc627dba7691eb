package ocm

import (
	"errors"

	ocmerrors "github.com/openshift-online/ocm-sdk-go/errors"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// csError turns an SDK result into the domain's error type. The SDK
// returns no error at all for an error status with an empty body, so the
// status is checked too: such an answer is no word of CS's (the transport
// lets only a 5xx or a status-defined one through that way).
func csError(err error, status int) error {
	if err != nil {
		var oe *ocmerrors.Error
		if errors.As(err, &oe) {
			return &cs.Error{Status: oe.Status(), Code: oe.Code(), Reason: oe.Reason()}
		}
		return err
	}
	if status >= 400 {
		return &cs.UnrecognizedAnswer{Status: status, Shape: "an empty body"}
	}
	return nil
}

// errNoBody is a success status without the object it should carry.
var errNoBody = errors.New("clusters service sent an empty response body")

// objectOf is the object of an SDK response that should carry one: CS's
// error as csError makes it, or errNoBody for a success without it.
func objectOf[O any, R interface {
	Status() int
	GetBody() (O, bool)
}](resp R, err error) (O, error) {
	var zero O
	if err := csError(err, resp.Status()); err != nil {
		return zero, err
	}
	o, ok := resp.GetBody()
	if !ok {
		return zero, errNoBody
	}
	return o, nil
}
