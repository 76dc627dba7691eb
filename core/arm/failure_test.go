package arm

import (
	"net/http"
	"testing"
)

// TestFailureStatus is docs/arm.md's mapping of a terminal failure to the
// status a synchronous request would have got.
func TestFailureStatus(t *testing.T) {
	for _, tc := range []struct {
		state ProvisioningState
		code  string
		want  int
	}{
		{ProvisioningStateFailed, CodeInvalidRequestContent, http.StatusBadRequest},
		{ProvisioningStateFailed, CodeInvalidParameter, http.StatusBadRequest},
		{ProvisioningStateFailed, CodeBadRequest, http.StatusBadRequest},
		{ProvisioningStateFailed, CodeConflict, http.StatusConflict},
		{ProvisioningStateFailed, CodeInternalServerError, http.StatusInternalServerError},
		{ProvisioningStateFailed, "OCM3055", http.StatusInternalServerError},
		{ProvisioningStateFailed, "", http.StatusInternalServerError},
		{ProvisioningStateCanceled, CodeCanceled, http.StatusConflict},
		{ProvisioningStateCanceled, CodeInvalidRequestContent, http.StatusConflict},
	} {
		if got := FailureStatus(tc.state, tc.code); got != tc.want {
			t.Errorf("FailureStatus(%s, %q) = %d, want %d", tc.state, tc.code, got, tc.want)
		}
	}
}
