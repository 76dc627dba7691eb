package frontend

import (
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/uuid"

	"github.com/hcpops/hcpops/core/arm"
	"github.com/hcpops/hcpops/core/document"
)

// The frontend's refusals of a request body and path, as ARO-HCP's
// internal/validation states them. Put* and Delete write what they are
// given (tests write documents the frontend would refuse, to watch the
// backend fail them); a caller that stands in for ARM's frontend, such as
// hcpopsctl submit, checks first with the functions here.

// Name rules of ARO-HCP's validators: a DNS label that may hold upper
// case, 54 characters for a cluster, 15 for its children.
var (
	clusterName  = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]{0,52}[a-zA-Z0-9])?$`)
	childName    = regexp.MustCompile(`^[a-zA-Z]([-a-zA-Z0-9]{0,13}[a-zA-Z0-9])?$`)
	groupName    = regexp.MustCompile(`^[\p{L}\p{N}_\-.()]{0,89}[\p{L}\p{N}_\-()]$`)
	locationName = regexp.MustCompile(`^[a-z0-9]+$`)
)

// Limits ARO-HCP's validators set.
const (
	maxReplicas         = 200 // per node pool without an availability zone
	maxNodeDrainMinutes = 10080
	maxAudiences        = 10
	minClusterVersion   = "4.20"
	minNodePoolVersion  = "4.20.8"
)

// channelGroups are the ones a customer may choose without the
// experimental-release feature.
var channelGroups = []string{"stable", "fast"}

// FieldError is one refused value, named by its path in the ARM request
// ("id" for the resource ID, "properties.replicas" ...) as ARO-HCP's
// field errors are.
type FieldError struct {
	Field  string
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Reason)
}

// InvalidError is ARM's 400 for a request the frontend refuses: every
// field error of the request, so a caller fixes them in one go.
type InvalidError struct{ Fields []*FieldError }

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}

// IsInvalid reports whether err is an *InvalidError.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

// checks collects field errors.
type checks []*FieldError

func (c *checks) fail(field, value, format string, args ...any) {
	*c = append(*c, &FieldError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)})
}

func (c checks) err() error {
	if len(c) == 0 {
		return nil
	}
	return &InvalidError{Fields: c}
}

// Target is a request path the frontend serves: a cluster, node pool or
// external auth in a resource group.
type Target struct {
	ID             string
	Kind           document.Kind
	SubscriptionID string
	ResourceGroup  string
	Cluster        string
	// Name is the resource's own name (the cluster's, for a cluster).
	Name string
}

// CheckResourceID parses a resource ID in exactly the shapes the
// frontend routes: /subscriptions/{uuid}/resourceGroups/{rg}/providers/
// Microsoft.RedHatOpenShift/hcpOpenShiftClusters/{name}, optionally
// followed by /nodePools/{name} or /externalAuths/{name}, every name by
// ARO-HCP's rules. The error names the segment at fault.
func CheckResourceID(id string) (Target, error) {
	const shape = "/subscriptions/SUB/resourceGroups/RG/providers/" + arm.ClusterResourceType + "/NAME[/" +
		arm.NodePoolsType + "/NAME | /" + arm.ExternalAuthsType + "/NAME]"
	var c checks
	segs := strings.Split(id, "/")
	if !strings.HasPrefix(id, "/") || len(segs) < 9 || len(segs) > 11 {
		c.fail("id", id, "want %s", shape)
		return Target{}, c.err()
	}
	segs = segs[1:]
	t := Target{ID: id, Kind: document.KindCluster, SubscriptionID: segs[1], ResourceGroup: segs[3], Cluster: segs[7], Name: segs[7]}
	for i, want := range map[int]string{0: "subscriptions", 2: "resourceGroups", 4: "providers", 5: arm.ProviderNamespace, 6: arm.ClustersType} {
		if !strings.EqualFold(segs[i], want) {
			c.fail("id", id, "segment %d is %q, want %q (%s)", i+1, segs[i], want, shape)
		}
	}
	if len(c) > 0 {
		return Target{}, c.err()
	}
	if _, ok := document.CanonicalUUID(t.SubscriptionID); !ok {
		c.fail("id", id, "subscription %q is not a UUID such as 1d3378d3-5a3f-4712-85a1-2485495dfc4b", t.SubscriptionID)
	}
	if !groupName.MatchString(t.ResourceGroup) {
		c.fail("id", id, "resource group %q: at most 90 letters, digits, _ - . ( ), not ending in '.'", t.ResourceGroup)
	}
	checkName(&c, id, "cluster", t.Cluster, clusterName, 54)
	if len(segs) > 8 {
		child := segs[8]
		switch {
		case strings.EqualFold(child, arm.NodePoolsType):
			t.Kind = document.KindNodePool
		case strings.EqualFold(child, arm.ExternalAuthsType):
			t.Kind = document.KindExternalAuth
		default:
			c.fail("id", id, "%q is not a child type of a cluster (want %s or %s)", child, arm.NodePoolsType, arm.ExternalAuthsType)
			return Target{}, c.err()
		}
		if len(segs) == 9 {
			c.fail("id", id, "the %s name is missing after /%s", t.Kind, child)
			return Target{}, c.err()
		}
		t.Name = segs[9]
		checkName(&c, id, t.Kind.String(), t.Name, childName, 15)
	}
	return t, c.err()
}

func checkName(c *checks, id, what, name string, re *regexp.Regexp, max int) {
	switch {
	case name == "":
		c.fail("id", id, "the %s name is empty", what)
	case !re.MatchString(name):
		c.fail("id", id, "%s name %q: at most %d letters, digits and '-', starting with a letter and not ending in '-'", what, name, max)
	}
}

// CheckCluster is the frontend's check of a cluster PUT in resource group
// rg.
func CheckCluster(spec ClusterSpec, rg string) error {
	var c checks
	checkLocation(&c, "location", spec.Location, true)
	if v := checkVersion(&c, "properties.version.id", spec.VersionID, minClusterVersion); v != nil {
		if strings.Count(spec.VersionID, ".") > 1 {
			c.fail("properties.version.id", spec.VersionID, "must be specified as MAJOR.MINOR; the PATCH value is managed")
		}
		if v.Major() >= 5 {
			c.fail("properties.version.id", spec.VersionID, "OpenShift v5 and above is not supported")
		}
	}
	checkChannel(&c, "properties.version.channelGroup", spec.ChannelGroup)
	if mrg := spec.ManagedResourceGroup; mrg != "" {
		switch {
		case !groupName.MatchString(mrg):
			c.fail("properties.platform.managedResourceGroup", mrg, "at most 90 letters, digits, _ - . ( ), not ending in '.'")
		case strings.EqualFold(mrg, rg):
			c.fail("properties.platform.managedResourceGroup", mrg, "must not be the cluster's own resource group %q", rg)
		}
	}
	if d := spec.NodeDrainTimeoutMinutes; d != nil && (*d < 0 || *d > maxNodeDrainMinutes) {
		c.fail("properties.nodeDrainTimeoutMinutes", strconv.Itoa(*d), "must be between 0 and %d", maxNodeDrainMinutes)
	}
	return c.err()
}

// CheckNodePool is the frontend's check of a node pool PUT.
func CheckNodePool(spec NodePoolSpec) error {
	var c checks
	if v := checkVersion(&c, "properties.version.id", spec.VersionID, minNodePoolVersion); v != nil && strings.Count(strings.SplitN(spec.VersionID, "-", 2)[0], ".") != 2 {
		c.fail("properties.version.id", spec.VersionID, "must be specified as MAJOR.MINOR.PATCH with optional pre-release")
	}
	checkChannel(&c, "properties.version.channelGroup", spec.ChannelGroup)
	if strings.TrimSpace(spec.VMSize) == "" {
		c.fail("properties.platform.vmSize", spec.VMSize, "is required")
	}
	if spec.Replicas < 0 || spec.Replicas > maxReplicas {
		c.fail("properties.replicas", strconv.Itoa(spec.Replicas), "must be between 0 and %d", maxReplicas)
	}
	return c.err()
}

// CheckExternalAuth is the frontend's check of an external auth PUT.
func CheckExternalAuth(spec ExternalAuthSpec) error {
	var c checks
	const issuer = "properties.issuer.url"
	switch u, err := url.Parse(spec.IssuerURL); {
	case spec.IssuerURL == "":
		c.fail(issuer, spec.IssuerURL, "is required")
	case err != nil:
		c.fail(issuer, spec.IssuerURL, "not a URL: %v", err)
	case u.Scheme != "https" || u.Host == "":
		c.fail(issuer, spec.IssuerURL, "must be https URL")
	}
	const aud = "properties.issuer.audiences"
	switch n := len(spec.Audiences); {
	case n == 0:
		c.fail(aud, "", "must have at least 1 item")
	case n > maxAudiences:
		c.fail(aud, strings.Join(spec.Audiences, ","), "must have at most %d items", maxAudiences)
	}
	for i, a := range spec.Audiences {
		if strings.TrimSpace(a) == "" {
			c.fail(fmt.Sprintf("%s[%d]", aud, i), a, "is required")
		}
	}
	if spec.CA != "" {
		if b, _ := pem.Decode([]byte(spec.CA)); b == nil {
			c.fail("properties.issuer.ca", spec.CA, "not PEM-encoded")
		}
	}
	return c.err()
}

// CheckOptions checks what ARM's request headers carry: the notification
// URI ARM is to be told on, and the caller's tenant and object ids.
func CheckOptions(o Options) error {
	var c checks
	if o.NotificationURI != "" {
		switch u, err := url.Parse(o.NotificationURI); {
		case err != nil:
			c.fail("Azure-AsyncNotificationUri", o.NotificationURI, "not a URL: %v", err)
		case (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			c.fail("Azure-AsyncNotificationUri", o.NotificationURI, "want an absolute http(s) URL")
		}
	}
	for _, h := range []struct{ name, v string }{{"X-Ms-Home-Tenant-Id", o.TenantID}, {"X-Ms-Client-Object-Id", o.ClientID}} {
		if _, err := uuid.Parse(h.v); h.v != "" && (err != nil || len(h.v) != 36) {
			c.fail(h.name, h.v, "not a UUID")
		}
	}
	checkLocation(&c, "location", o.Location, false)
	return c.err()
}

func checkLocation(c *checks, field, loc string, required bool) {
	switch {
	case loc == "" && required:
		c.fail(field, loc, "is required")
	case loc != "" && !locationName.MatchString(loc):
		c.fail(field, loc, "an Azure location name is lower-case letters and digits, such as eastus")
	}
}

// checkVersion checks a version id is present, a version, and at least
// min; it returns the parsed version when it is one.
func checkVersion(c *checks, field, v, min string) *semver.Version {
	if v == "" {
		c.fail(field, v, "is required")
		return nil
	}
	parsed, err := semver.NewVersion(v)
	if err != nil {
		c.fail(field, v, "not a version: %v", err)
		return nil
	}
	if parsed.LessThan(semver.MustParse(min)) {
		c.fail(field, v, "must be at least %s", min)
	}
	return parsed
}

func checkChannel(c *checks, field, g string) {
	for _, ok := range channelGroups {
		if g == ok {
			return
		}
	}
	c.fail(field, g, "want one of %s", strings.Join(channelGroups, ", "))
}
