package arm

import "net/http"

// CodeBadRequest is a caller's fault that maps to its own status (as
// CodeConflict does, arm.go).
const CodeBadRequest = "BadRequest"

// FailureStatus is the HTTP status a synchronous request would have got
// for an operation that ended in state s with error code: what Clusters
// Service (or hcpops's own validation) refused as the caller's fault is a
// 400; a Canceled operation, superseded by a later request on the same
// resource, is a 409; everything else (a failed install, a deadline, an
// error of unknown meaning) is the service's, a 500. docs/arm.md has the
// table.
func FailureStatus(s ProvisioningState, code string) int {
	if s == ProvisioningStateCanceled {
		return http.StatusConflict
	}
	switch code {
	case CodeInvalidRequestContent, CodeInvalidParameter, CodeBadRequest:
		return http.StatusBadRequest
	case CodeConflict:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
