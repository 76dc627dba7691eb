package state

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hcpops/hcpops/core/arm"
)

// OperationState is one source's view of how an operation is doing.
type OperationState struct {
	// Source names where the state came from (e.g. "clusterServiceClusterStatus").
	Source            string
	ProvisioningState arm.ProvisioningState
	Message           string
	// Error is the source's own error when it has one: CS's code (OCM3055,
	// MultipleErrorsOccurred) and details, which the merged message alone
	// would lose. Decide keeps what it can of it.
	Error *arm.CloudErrorBody
	// UnderWay is CS's own word that the change is in progress (an object
	// installing, updating or uninstalling, an upgrade policy pending,
	// scheduled or started): no deadline fails an operation while one of
	// its sources says so.
	UnderWay bool
}

// NewOperationState is a state with a message and no source yet.
func NewOperationState(s arm.ProvisioningState, message string) *OperationState {
	return &OperationState{ProvisioningState: s, Message: message}
}

// FromConversion is the state a Convert* function returned: its status,
// and its error's message and body when it gave one.
func FromConversion(s arm.ProvisioningState, cerr *arm.CloudErrorBody) *OperationState {
	o := &OperationState{ProvisioningState: s, Error: cerr}
	if cerr != nil {
		o.Message = cerr.Message
	}
	return o
}

// Working records whether the state is CS's word that the change is
// under way, and returns it.
func (o *OperationState) Working(underWay bool) *OperationState {
	o.UnderWay = underWay
	return o
}

// WithSource names the state's source and returns it.
func (o *OperationState) WithSource(source string) *OperationState {
	o.Source = source
	return o
}

// priority orders states from worst to best: "" -1, Failed 0, Canceled 10,
// Deleting 20, Provisioning 30, AwaitingSecret 35, Updating 40, Accepted 50,
// Succeeded 100. A state ARO-HCP does not list counts as 0, like Failed (a
// missing key in ARO-HCP's priority map).
func priority(s arm.ProvisioningState) int {
	switch s {
	case "":
		return -1
	case arm.ProvisioningStateFailed:
		return 0
	case arm.ProvisioningStateCanceled:
		return 10
	case arm.ProvisioningStateDeleting:
		return 20
	case arm.ProvisioningStateProvisioning:
		return 30
	case arm.ProvisioningStateAwaitingSecret:
		return 35
	case arm.ProvisioningStateUpdating:
		return 40
	case arm.ProvisioningStateAccepted:
		return 50
	case arm.ProvisioningStateSucceeded:
		return 100
	}
	return 0
}

// CompareOperationState orders states worst first: nil before anything,
// then by priority, then by Message.
func CompareOperationState(lhs, rhs *OperationState) int {
	switch {
	case lhs == nil && rhs == nil:
		return 0
	case lhs == nil:
		return -1
	case rhs == nil:
		return 1
	}
	if c := priority(lhs.ProvisioningState) - priority(rhs.ProvisioningState); c != 0 {
		if c < 0 {
			return -1
		}
		return 1
	}
	return strings.Compare(lhs.Message, rhs.Message)
}

// PickWorstOperationState takes states sorted by CompareOperationState and
// returns the first one's state with the messages of the leading run of
// that state joined as "[source] message; ..." (<no_source>/<no_message>
// for blanks). An empty list or an empty first state is an error.
func PickWorstOperationState(states []*OperationState) (*OperationState, error) {
	if len(states) == 0 {
		return nil, errors.New("no operation states")
	}
	if states[0] == nil || states[0].ProvisioningState == "" {
		return nil, errors.New("empty provisioning state")
	}
	worst := states[0].ProvisioningState
	var parts []string
	for _, s := range states {
		if s == nil || s.ProvisioningState != worst {
			break
		}
		source, msg := s.Source, s.Message
		if source == "" {
			source = "<no_source>"
		}
		if msg == "" {
			msg = "<no_message>"
		}
		parts = append(parts, fmt.Sprintf("[%s] %s", source, msg))
	}
	return &OperationState{ProvisioningState: worst, Message: strings.Join(parts, "; ")}, nil
}

// Decision is what an operation's sources add up to.
type Decision struct {
	// State is the worst source's state.
	State arm.ProvisioningState
	// Error is what to persist when State is Failed, nil otherwise.
	Error *arm.CloudErrorBody
	// Sources are the states decided from, worst first.
	Sources []*OperationState
}

// Message is the merged message of the sources in the worst state
// ("[source] message; ..."), as PickWorstOperationState words it. It is
// built on demand: most polls change nothing and say nothing.
func (d Decision) Message() string {
	picked, err := PickWorstOperationState(d.Sources)
	if err != nil {
		return ""
	}
	return picked.Message
}

// How Decide words a failure.
type FailureMessage int

const (
	// Merged persists the merged, source-prefixed message, as upstream's
	// create and update controllers do.
	Merged FailureMessage = iota
	// Bare persists the failing source's own error as it came, as
	// upstream's delete and credential controllers do (they write the
	// conversion's error without merging).
	Bare
)

// Decide sorts states, picks the worst and, when it is Failed, builds the
// error to persist. Its code is the first failing source's own code when
// that is more than upstream's placeholder InternalServerError (CS's
// OCM3055, MultipleErrorsOccurred with its details), else fallbackCode
// (upstream's code for the request: InternalServerError for a create,
// InvalidRequestContent for an update).
func Decide(fallbackCode string, wording FailureMessage, states ...*OperationState) (Decision, error) {
	sorted := states
	if len(states) > 1 { // one source, as most polls have, is sorted already
		sorted = slices.Clone(states)
		slices.SortStableFunc(sorted, CompareOperationState)
	}
	if len(sorted) == 0 || sorted[0] == nil || sorted[0].ProvisioningState == "" {
		_, err := PickWorstOperationState(sorted)
		return Decision{}, err
	}
	first := sorted[0]
	d := Decision{State: first.ProvisioningState, Sources: sorted}
	if d.State != arm.ProvisioningStateFailed {
		return d, nil
	}
	picked, err := PickWorstOperationState(sorted)
	if err != nil {
		return Decision{}, err
	}
	if wording == Bare {
		d.Error = &arm.CloudErrorBody{Code: fallbackCode, Message: first.Message}
		if first.Error != nil {
			c := *first.Error
			d.Error = &c
		}
		return d, nil
	}
	d.Error = &arm.CloudErrorBody{Code: fallbackCode, Message: picked.Message}
	for _, s := range sorted {
		if s.ProvisioningState != arm.ProvisioningStateFailed {
			break
		}
		if s.Error != nil && s.Error.Code != "" && s.Error.Code != arm.CodeInternalServerError {
			d.Error.Code, d.Error.Details = s.Error.Code, s.Error.Details
			break
		}
	}
	return d, nil
}

// NeedToPatchOperation reports whether an operation must be written: its
// status changes, or a new error differs BY VALUE from the current one, or
// it is (still) terminal with a notification URI left to serve. A nil new
// error never counts, because a status write never clears an error. ARO-HCP
// compares error pointers, so every poll that produces an error rewrites the
// document; comparing values does not.
func NeedToPatchOperation(currentStatus arm.ProvisioningState, currentError *arm.CloudErrorBody, notificationURI string,
	newStatus arm.ProvisioningState, newError *arm.CloudErrorBody,
) bool {
	statusChanged := currentStatus != newStatus
	errorChanged := newError != nil && !newError.Equal(currentError)
	needsNotification := notificationURI != "" && newStatus.IsTerminal()
	return statusChanged || errorChanged || needsNotification
}
