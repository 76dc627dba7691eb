package document

import (
	"strings"

	"github.com/hcpops/hcpops/core/arm"
)

// ARO-HCP's ListActiveOperations filter in its own words (Cosmos DB SQL,
// with @type bound to arm.OperationResourceType), for the Cosmos store to
// send; Classify is the same filter for the stores that keep their own
// documents and for the view, so the three cannot drift apart.
const (
	activeOperationsBase = "SELECT * FROM c WHERE STRINGEQUALS(c.resourceType, @type, true)" +
		" AND LENGTH(c.resourceID) > 0 AND NOT IS_DEFINED(c.deletionTimestamp)"
	notTerminal         = `NOT ARRAYCONTAINS(["Succeeded","Failed","Canceled"], c.properties.status)`
	pendingNotification = "(IS_STRING(c.properties.notificationUri) AND LENGTH(c.properties.notificationUri) > 0)"

	// ActiveOperationsQuery lists the documents of ClassActive.
	ActiveOperationsQuery = activeOperationsBase + " AND " + notTerminal
	// ActiveOrPendingQuery lists the documents of ClassActive and ClassPending.
	ActiveOrPendingQuery = activeOperationsBase + " AND (" + notTerminal + " OR " + pendingNotification + ")"
	// ActiveOperationsTypeParameter is the parameter the queries compare
	// resourceType with.
	ActiveOperationsTypeParameter = "@type"
)

// Class is what a document is to the active-operations query. Its values
// are stored (the embedded store's operations index), so they never change.
type Class byte

const (
	ClassNone    Class = 0 // not listed
	ClassActive  Class = 1 // a non-terminal operation: polled
	ClassPending Class = 2 // a terminal operation with a notification still to send
)

// Listed says whether the query, with or without pending notifications,
// lists a document of class c.
func (c Class) Listed(withPending bool) bool {
	return c == ClassActive || (withPending && c == ClassPending)
}

// Facts are what the query reads of a document, each as Cosmos DB's SQL
// sees it.
type Facts struct {
	Operation  bool // STRINGEQUALS(c.resourceType, @type, true): IsOperationType
	ResourceID bool // LENGTH(c.resourceID) > 0: a non-empty string
	Deleted    bool // IS_DEFINED(c.deletionTimestamp): there at all, null included
	Terminal   bool // ARRAYCONTAINS([...], c.properties.status): TerminalStatus
	NotifyURI  bool // properties.notificationUri is a non-empty string
}

// Candidate says whether the envelope admits the document: if not, its
// properties need not be read.
func (f Facts) Candidate() bool { return f.Operation && f.ResourceID && !f.Deleted }

// Classify applies the query to f. ARRAYCONTAINS always yields a boolean:
// a missing, null or non-string status is simply not in the array, so the
// NOT is true and such an operation is active. That is also the safe side
// for the lifecycle: an operation whose status is unreadable keeps being
// polled (and eventually times out) instead of being silently forgotten.
func Classify(f Facts) Class {
	switch {
	case !f.Candidate():
		return ClassNone
	case !f.Terminal:
		return ClassActive
	case f.NotifyURI:
		return ClassPending
	}
	return ClassNone
}

// IsOperationType reports whether resourceType is an operation document's,
// in any casing (STRINGEQUALS with ignoreCase).
func IsOperationType(resourceType string) bool {
	return strings.EqualFold(resourceType, arm.OperationResourceType)
}

// TerminalStatus reports whether status is in the query's array of
// terminal states. The comparison is exact, as in Cosmos DB, so
// "succeeded" in lower case is not terminal.
func TerminalStatus(status string) bool {
	switch arm.ProvisioningState(status) {
	case arm.ProvisioningStateSucceeded, arm.ProvisioningStateFailed, arm.ProvisioningStateCanceled:
		return true
	}
	return false
}

// ClassifyObject is Classify for a document as ParseObject split it (its
// members as read, so properties is split without validating it again).
func ClassifyObject(o Object) Class {
	// Each member is decoded only when the ones before have not settled it:
	// a store classifies every document it writes.
	_, deleted := o.Get("deletionTimestamp")
	resourceID, _ := o.Get("resourceID") // any string but "" decodes to a non-empty one
	f := Facts{ResourceID: len(resourceID) > 2 && resourceID[0] == '"', Deleted: deleted}
	if f.ResourceID && !f.Deleted {
		resourceType, _ := o.GetString("resourceType")
		f.Operation = IsOperationType(resourceType)
	}
	if raw, ok := o.Get("properties"); ok && f.Candidate() {
		props, _ := splitObject(raw) // not an object: status is undefined
		status, _ := props.GetString("status")
		uri, _ := props.GetString("notificationUri")
		f.Terminal, f.NotifyURI = TerminalStatus(status), uri != ""
	}
	return Classify(f)
}
