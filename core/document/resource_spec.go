package document

// Version is an OpenShift version and channel group.
type Version struct {
	ID           string
	ChannelGroup string
}

// Version is customerProperties.version for a cluster and
// properties.properties.version for a node pool.
func (r *Resource) Version() Version {
	var base []string
	switch r.Kind {
	case KindCluster:
		base = customer("version")
	case KindNodePool:
		base = inner("version")
	default:
		return Version{}
	}
	return Version{
		ID:           getString(r.view(), append(base[:len(base):len(base)], "id")),
		ChannelGroup: getString(r.view(), append(base[:len(base):len(base)], "channelGroup")),
	}
}

// NodeDrainTimeoutMinutes is the cluster's customerProperties value, if set.
func (r *Resource) NodeDrainTimeoutMinutes() (int64, bool) {
	if r.Kind != KindCluster {
		return 0, false
	}
	return getInt(r.view(), customer("nodeDrainTimeoutMinutes"))
}

// AuthorizedCIDRs is the cluster's customerProperties.api.authorizedCidrs;
// ok is false when the member is absent.
func (r *Resource) AuthorizedCIDRs() ([]string, bool) {
	if r.Kind != KindCluster {
		return nil, false
	}
	return getStringList(r.view(), customer("api", "authorizedCidrs"))
}

// ManagedResourceGroup is the cluster's
// customerProperties.platform.managedResourceGroup ("" if absent).
func (r *Resource) ManagedResourceGroup() string {
	if r.Kind != KindCluster {
		return ""
	}
	return getString(r.view(), customer("platform", "managedResourceGroup"))
}

// NodePoolSpec is what a node pool's properties.properties asks of CS.
type NodePoolSpec struct {
	Version    Version
	VMSize     string
	Replicas   int64
	AutoRepair bool
	Labels     map[string]string
}

// NodePool returns the node pool spec; an error for other kinds.
func (r *Resource) NodePool() (NodePoolSpec, error) {
	if err := r.need(KindNodePool, "properties.properties"); err != nil {
		return NodePoolSpec{}, err
	}
	s := NodePoolSpec{Version: r.Version(), VMSize: getString(r.view(), inner("platform", "vmSize"))}
	s.Replicas, _ = getInt(r.view(), inner("replicas"))
	s.AutoRepair, _ = getBool(r.view(), inner("autoRepair"))
	s.Labels, _ = getStringMap(r.view(), inner("labels"))
	return s, nil
}

// Issuer is an external auth's token issuer.
type Issuer struct {
	URL       string
	Audiences []string
	CA        string
}

// Issuer returns the external auth's properties.properties.issuer; an error
// for other kinds.
func (r *Resource) Issuer() (Issuer, error) {
	if err := r.need(KindExternalAuth, "properties.properties.issuer"); err != nil {
		return Issuer{}, err
	}
	i := Issuer{
		URL: getString(r.view(), inner("issuer", "url")),
		CA:  getString(r.view(), inner("issuer", "ca")),
	}
	i.Audiences, _ = getStringList(r.view(), inner("issuer", "audiences"))
	return i, nil
}
