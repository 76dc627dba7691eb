// Package state turns Clusters Service states into ARM provisioning states
// and merges the states of several sources into one, with the semantics of
// ARO-HCP's backend operationutils, so an operation reads the same here as
// it would in ARO-HCP's own backend.
//
// Every conversion takes the operation's request and current status and
// returns the new status, the error to record on the operation (nil when
// none), and a conversion error. On a conversion error the returned status
// is the current one and the caller should write nothing.
package state

import (
	"context"
	"fmt"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/clusterservice"
	"github.com/hcpops/hcpops/core/document"
)

// InflightReader reads a cluster's inflight checks; clusterservice.Client
// satisfies it.
type InflightReader interface {
	GetInflightChecks(ctx context.Context, clusterHref string) ([]clusterservice.InflightCheck, error)
}

// Messages ARO-HCP writes.
const (
	MessageMultipleInflightErrors = "Cluster provisioning failed due to multiple errors"
	MessageCredentialFailed       = "Failed to provision cluster credential"
)

// ConvertClusterStatus maps a CS cluster status onto the operation:
//
//	error         -> Failed; code = CS provision code (InternalServerError if
//	                 empty), message = provision message (description if empty);
//	                 OCM4001 -> the failed inflight checks (see inflightError)
//	installing    -> Provisioning
//	updating      -> Updating
//	ready         -> Succeeded (unchanged for Delete: success is the CS 404)
//	uninstalling  -> Deleting
//	pending,
//	validating    -> unchanged; an error unless the current status fits the
//	                 request (Create: Accepted/Provisioning; Update:
//	                 Accepted/Updating; Delete: Deleting; others: always)
//	anything else -> unchanged, with an error
func ConvertClusterStatus(ctx context.Context, reader InflightReader, clusterHref string,
	status clusterservice.ClusterStatus, request document.Request, current arm.ProvisioningState,
) (arm.ProvisioningState, *arm.CloudErrorBody, error) {
	switch s := status.State; s {
	case clusterservice.ClusterStateError:
		code := status.ProvisionErrorCode
		if code == "" {
			code = arm.CodeInternalServerError
		}
		if code == clusterservice.ProvisionErrorInflightChecks {
			body, err := inflightError(ctx, reader, clusterHref)
			if err != nil {
				return current, nil, err
			}
			return arm.ProvisioningStateFailed, body, nil
		}
		msg := status.ProvisionErrorMessage
		if msg == "" {
			msg = status.Description
		}
		return arm.ProvisioningStateFailed, &arm.CloudErrorBody{Code: code, Message: msg}, nil
	case clusterservice.ClusterStateInstalling:
		return arm.ProvisioningStateProvisioning, nil, nil
	case clusterservice.ClusterStateUpdating:
		return arm.ProvisioningStateUpdating, nil, nil
	case clusterservice.ClusterStateReady:
		if request == document.RequestDelete {
			return current, nil, nil
		}
		return arm.ProvisioningStateSucceeded, nil, nil
	case clusterservice.ClusterStateUninstalling:
		return arm.ProvisioningStateDeleting, nil, nil
	case clusterservice.ClusterStatePending, clusterservice.ClusterStateValidating:
		var allowed []arm.ProvisioningState
		switch request {
		case document.RequestCreate:
			allowed = []arm.ProvisioningState{arm.ProvisioningStateAccepted, arm.ProvisioningStateProvisioning}
		case document.RequestUpdate:
			allowed = []arm.ProvisioningState{arm.ProvisioningStateAccepted, arm.ProvisioningStateUpdating}
		case document.RequestDelete:
			allowed = []arm.ProvisioningState{arm.ProvisioningStateDeleting}
		default:
			return current, nil, fmt.Errorf("cluster state %q: unrecognized operation request %q", s, request)
		}
		for _, a := range allowed {
			if current == a {
				return current, nil, nil
			}
		}
		return current, nil, fmt.Errorf("got cluster state %q (description: %q) while the %s operation was %q, want one of %q",
			s, status.Description, request, current, allowed)
	default:
		return current, nil, fmt.Errorf("unhandled cluster state %q (description: %q)", s, status.Description)
	}
}

// inflightError reads the cluster's inflight checks after CS reported
// OCM4001. Each failed check becomes {InternalServerError, details["error"]}.
// None failed: a bare InternalServerError. One: that error. More:
// MultipleErrorsOccurred with the errors as details.
func inflightError(ctx context.Context, reader InflightReader, clusterHref string) (*arm.CloudErrorBody, error) {
	if reader == nil {
		return nil, fmt.Errorf("cluster %s: CS reported %s but no inflight-check reader is configured", clusterHref, clusterservice.ProvisionErrorInflightChecks)
	}
	checks, err := reader.GetInflightChecks(ctx, clusterHref)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: reading inflight checks: %w", clusterHref, err)
	}
	var failed []arm.CloudErrorBody
	for _, c := range checks {
		if c.State != clusterservice.InflightCheckFailed {
			continue
		}
		msg, _ := c.Details["error"].(string)
		failed = append(failed, arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: msg})
	}
	switch len(failed) {
	case 0:
		return &arm.CloudErrorBody{Code: arm.CodeInternalServerError}, nil
	case 1:
		return &failed[0], nil
	}
	return &arm.CloudErrorBody{Code: arm.CodeMultipleErrorsOccurred, Message: MessageMultipleInflightErrors, Details: failed}, nil
}

// ConvertNodePoolStatus maps a CS node pool status onto the operation:
//
//	validating, pending,
//	validating_update,
//	pending_update       -> unchanged; an error unless the current status is Accepted
//	installing           -> Provisioning
//	ready                -> Succeeded (unchanged for Delete)
//	updating             -> Updating
//	uninstalling         -> Deleting
//	recoverable_error,
//	error                -> Failed, InternalServerError with the CS message
//	anything else        -> unchanged, with an error
func ConvertNodePoolStatus(status clusterservice.NodePoolStatus, request document.Request, current arm.ProvisioningState) (arm.ProvisioningState, *arm.CloudErrorBody, error) {
	switch s := status.State; s {
	case clusterservice.NodePoolStateValidating, clusterservice.NodePoolStatePending,
		clusterservice.NodePoolStateValidatingUpdate, clusterservice.NodePoolStatePendingUpdate:
		if current != arm.ProvisioningStateAccepted {
			return current, nil, fmt.Errorf("got node pool state %q (message: %q) while the operation was %q, want %q",
				s, status.Message, current, arm.ProvisioningStateAccepted)
		}
		return current, nil, nil
	case clusterservice.NodePoolStateInstalling:
		return arm.ProvisioningStateProvisioning, nil, nil
	case clusterservice.NodePoolStateReady:
		if request == document.RequestDelete {
			return current, nil, nil
		}
		return arm.ProvisioningStateSucceeded, nil, nil
	case clusterservice.NodePoolStateUpdating:
		return arm.ProvisioningStateUpdating, nil, nil
	case clusterservice.NodePoolStateUninstalling:
		return arm.ProvisioningStateDeleting, nil, nil
	case clusterservice.NodePoolStateRecoverableError, clusterservice.NodePoolStateError:
		return arm.ProvisioningStateFailed, internalServerError(status.Message), nil
	default:
		return current, nil, fmt.Errorf("unhandled node pool state %q (message: %q)", s, status.Message)
	}
}

// ConvertExternalAuthStatus maps a CS external auth status onto the
// operation:
//
//	ready         -> Succeeded (unchanged for Delete)
//	error         -> Failed, InternalServerError with the CS message
//	uninstalling  -> Deleting
//	anything else -> unchanged, with an error
func ConvertExternalAuthStatus(status clusterservice.ExternalAuthStatus, request document.Request, current arm.ProvisioningState) (arm.ProvisioningState, *arm.CloudErrorBody, error) {
	switch s := status.State; s {
	case clusterservice.ExternalAuthStateReady:
		if request == document.RequestDelete {
			return current, nil, nil
		}
		return arm.ProvisioningStateSucceeded, nil, nil
	case clusterservice.ExternalAuthStateError:
		return arm.ProvisioningStateFailed, internalServerError(status.Message), nil
	case clusterservice.ExternalAuthStateUninstalling:
		return arm.ProvisioningStateDeleting, nil, nil
	default:
		return current, nil, fmt.Errorf("unhandled external auth state %q (message: %q)", s, status.Message)
	}
}

// ConvertCredentialStatus maps a break-glass credential's CS status onto a
// RequestCredential operation: created -> Provisioning, issued -> Succeeded,
// failed -> Failed (InternalServerError "Failed to provision cluster
// credential"), anything else -> unchanged, with an error.
func ConvertCredentialStatus(credentialStatus string, current arm.ProvisioningState) (arm.ProvisioningState, *arm.CloudErrorBody, error) {
	switch credentialStatus {
	case clusterservice.CredentialStateCreated:
		return arm.ProvisioningStateProvisioning, nil, nil
	case clusterservice.CredentialStateIssued:
		return arm.ProvisioningStateSucceeded, nil, nil
	case clusterservice.CredentialStateFailed:
		return arm.ProvisioningStateFailed, &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: MessageCredentialFailed}, nil
	default:
		return current, nil, fmt.Errorf("unhandled break-glass credential status %q", credentialStatus)
	}
}

// internalServerError is ARO-HCP's generic error with CS's message (CS has
// no error code for node pools and external auths). An empty message stays
// empty, as upstream keeps it.
func internalServerError(csMessage string) *arm.CloudErrorBody {
	return &arm.CloudErrorBody{Code: arm.CodeInternalServerError, Message: csMessage}
}
