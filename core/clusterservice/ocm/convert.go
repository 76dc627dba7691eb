package ocm

import (
	"fmt"
	"math"
	"regexp"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"
	cmv1 "github.com/openshift-online/ocm-sdk-go/clustersmgmt/v1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// clusterIDRE is the caller-chosen cluster ID the contract promises: a
// KSUID in lower-case base32, as ARO-HCP generates it.
var clusterIDRE = regexp.MustCompile(`^[0-9a-v]{32}$`)

const (
	cidrAllowAll  = "allow_all"
	cidrAllowList = "allow_list"
)

func buildCluster(s cs.ClusterSpec) (*arohcp.Cluster, error) {
	if !clusterIDRE.MatchString(s.ID) {
		return nil, fmt.Errorf("cluster spec ID %q: want 32 characters of [0-9a-v]", s.ID)
	}
	for _, f := range []struct{ name, value string }{
		{"Name", s.Name},
		{"Azure.SubscriptionID", s.Azure.SubscriptionID},
		{"Azure.ResourceGroupName", s.Azure.ResourceGroupName},
		{"Azure.ResourceName", s.Azure.ResourceName},
	} {
		if f.value == "" {
			return nil, fmt.Errorf("cluster spec %s: required, got %q", f.name, f.value)
		}
	}
	b := arohcp.NewCluster().ID(s.ID).Name(s.Name)
	if s.Region != "" {
		b.Region(arohcp.NewCloudRegion().ID(s.Region))
	}
	if v := versionOf(s.VersionID, s.ChannelGroup); v != nil {
		b.Version(v)
	}
	az := arohcp.NewAzure().
		SubscriptionID(s.Azure.SubscriptionID).
		ResourceGroupName(s.Azure.ResourceGroupName).
		ResourceName(s.Azure.ResourceName)
	if s.Azure.TenantID != "" {
		az.TenantID(s.Azure.TenantID)
	}
	if s.Azure.ManagedResourceGroupName != "" {
		az.ManagedResourceGroupName(s.Azure.ManagedResourceGroupName)
	}
	return b.Azure(az).Build()
}

// buildClusterPatch sets only the fields the patch carries, so CS leaves
// everything else alone.
func buildClusterPatch(p cs.ClusterPatch) (*arohcp.Cluster, error) {
	b := arohcp.NewCluster()
	if p.NodeDrainGracePeriodMinutes != nil {
		if m := *p.NodeDrainGracePeriodMinutes; m < 0 {
			return nil, fmt.Errorf("cluster patch NodeDrainGracePeriodMinutes: %d is negative", m)
		}
		b.NodeDrainGracePeriod(arohcp.NewValue().Unit("minutes").Value(float64(*p.NodeDrainGracePeriodMinutes)))
	}
	if p.AuthorizedCIDRs != nil {
		allow := arohcp.NewCIDRBlockAllowAccess().Mode(cidrAllowAll)
		if len(p.AuthorizedCIDRs) > 0 {
			allow.Mode(cidrAllowList).Values(p.AuthorizedCIDRs...)
		}
		b.API(arohcp.NewClusterAPI().CIDRBlockAccess(arohcp.NewCIDRBlockAccess().Allow(allow)))
	}
	return b.Build()
}

func clusterFrom(o *arohcp.Cluster) cs.Cluster {
	out := cs.Cluster{
		ID:     o.ID(),
		Href:   o.HREF(),
		Name:   o.Name(),
		Region: o.Region().ID(),
		Azure: cs.AzureRef{
			SubscriptionID:           o.Azure().SubscriptionID(),
			ResourceGroupName:        o.Azure().ResourceGroupName(),
			ResourceName:             o.Azure().ResourceName(),
			TenantID:                 o.Azure().TenantID(),
			ManagedResourceGroupName: o.Azure().ManagedResourceGroupName(),
		},
		Status: clusterStatusFrom(o.Status()),
	}
	if out.Href == "" && out.ID != "" {
		out.Href = cs.ClusterHref(out.ID)
	}
	if v, ok := o.GetNodeDrainGracePeriod(); ok {
		m := v.Value()
		if v.Unit() == "hours" || v.Unit() == "hour" {
			m *= 60
		}
		out.NodeDrainGracePeriodMinutes = int(math.Round(m))
	}
	if allow := o.API().CIDRBlockAccess().Allow(); allow.Mode() == cidrAllowList {
		out.AuthorizedCIDRs = allow.Values()
	}
	if out.Status.State == "" {
		out.Status.State = string(o.State())
	}
	if v, ok := o.GetVersion(); ok {
		out.Version = cs.RawVersion(v.ID(), v.RawID(), v.ChannelGroup())
	}
	return out
}

func clusterStatusFrom(o *arohcp.ClusterStatus) cs.ClusterStatus {
	return cs.ClusterStatus{
		State:                 string(o.State()),
		Description:           o.Description(),
		ProvisionErrorCode:    o.ProvisionErrorCode(),
		ProvisionErrorMessage: o.ProvisionErrorMessage(),
	}
}

func inflightCheckFrom(o *arohcp.InflightCheck) cs.InflightCheck {
	out := cs.InflightCheck{ID: o.ID(), Name: o.Name(), State: string(o.State())}
	switch d := o.Details().(type) {
	case map[string]any:
		out.Details = d
	case nil:
	default:
		out.Details = map[string]any{"value": d}
	}
	return out
}

func checkChildID(kind, id string) error {
	if !cs.ValidChildID(id) {
		return fmt.Errorf("%s spec ID %q: want a lower-case ARM name (letters, digits, dashes)", kind, id)
	}
	return nil
}

func buildNodePool(s cs.NodePoolSpec) (*arohcp.NodePool, error) {
	if err := checkChildID("node pool", s.ID); err != nil {
		return nil, err
	}
	if s.Replicas < 0 {
		return nil, fmt.Errorf("node pool spec Replicas: %d is negative", s.Replicas)
	}
	b := arohcp.NewNodePool().ID(s.ID).Replicas(s.Replicas).AutoRepair(s.AutoRepair)
	if v := versionOf(s.VersionID, s.ChannelGroup); v != nil {
		b.Version(v)
	}
	if s.VMSize != "" {
		b.AzureNodePool(arohcp.NewAzureNodePool().VMSize(s.VMSize))
	}
	if s.Labels != nil {
		b.Labels(s.Labels)
	}
	return b.Build()
}

func buildNodePoolPatch(p cs.NodePoolPatch) (*arohcp.NodePool, error) {
	b := arohcp.NewNodePool()
	if p.Replicas != nil {
		if *p.Replicas < 0 {
			return nil, fmt.Errorf("node pool patch Replicas: %d is negative", *p.Replicas)
		}
		b.Replicas(*p.Replicas)
	}
	if p.Labels != nil {
		b.Labels(p.Labels)
	}
	return b.Build()
}

func nodePoolFrom(o *arohcp.NodePool, href string) cs.NodePool {
	out := cs.NodePool{
		ID:       o.ID(),
		Href:     o.HREF(),
		Replicas: o.Replicas(),
		Labels:   o.Labels(),
		Status:   nodePoolStatusFrom(o.Status()),
	}
	if out.Href == "" {
		out.Href = href
	}
	if v, ok := o.GetVersion(); ok {
		out.Version = cs.RawVersion(v.ID(), v.RawID(), v.ChannelGroup())
	}
	return out
}

func nodePoolStatusFrom(o *arohcp.NodePoolStatus) cs.NodePoolStatus {
	return cs.NodePoolStatus{
		State:           o.State().NodePoolStateValue(),
		Message:         o.Message(),
		CurrentReplicas: o.CurrentReplicas(),
	}
}

// buildExternalAuth builds a create body (create true) or a patch carrying
// only the issuer fields that are set.
func buildExternalAuth(s cs.ExternalAuthSpec, create bool) (*arohcp.ExternalAuth, error) {
	b := arohcp.NewExternalAuth()
	if create {
		if err := checkChildID("external auth", s.ID); err != nil {
			return nil, err
		}
		if s.IssuerURL == "" {
			return nil, fmt.Errorf("external auth spec IssuerURL: required, got %q", s.IssuerURL)
		}
		b.ID(s.ID)
	}
	issuer := arohcp.NewTokenIssuer()
	set := false
	if s.IssuerURL != "" {
		issuer.URL(s.IssuerURL)
		set = true
	}
	if s.Audiences != nil {
		issuer.Audiences(s.Audiences...)
		set = true
	}
	if s.IssuerCA != "" {
		issuer.CA(s.IssuerCA)
		set = true
	}
	if set {
		b.Issuer(issuer)
	}
	return b.Build()
}

func externalAuthFrom(o *arohcp.ExternalAuth, href string) cs.ExternalAuth {
	out := cs.ExternalAuth{
		ID:        o.ID(),
		Href:      o.HREF(),
		IssuerURL: o.Issuer().URL(),
		Audiences: o.Issuer().Audiences(),
		Status: cs.ExternalAuthStatus{
			State:   o.Status().State().Value(),
			Message: o.Status().Message(),
		},
	}
	if out.Href == "" {
		out.Href = href
	}
	return out
}

func credentialFrom(o *cmv1.BreakGlassCredential) cs.BreakGlassCredential {
	return cs.BreakGlassCredential{
		ID:       o.ID(),
		Href:     o.HREF(),
		Username: o.Username(),
		Status:   string(o.Status()),
		Expires:  o.ExpirationTimestamp(),
		// Only while issued; callers hand it to ARM and nowhere else.
		Kubeconfig: o.Kubeconfig(),
	}
}

// versionOf is the version a spec asks for, or nil when it names none; a
// member the spec leaves empty is left out rather than sent empty.
func versionOf(id, channelGroup string) *arohcp.VersionBuilder {
	if id == "" && channelGroup == "" {
		return nil
	}
	v := arohcp.NewVersion()
	if id != "" {
		v.ID(id)
	}
	if channelGroup != "" {
		v.ChannelGroup(channelGroup)
	}
	return v
}
