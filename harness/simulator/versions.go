package simulator

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	cs "github.com/hcpops/hcpops/core/clusterservice"
)

// VersionsPath is CS's OpenShift versions collection, which an ARO-HCP
// frontend lists for hcpOpenShiftVersions and reads to validate a version.
const VersionsPath = cs.AroHCPPrefix + "/versions"

// DefaultVersions are what a frontend accepts out of the box: ARO-HCP's
// frontend turns "4.20", "4.21" and "4.22" on the stable channel into
// the newest of these patch releases, and its version listing shows them
// all. Older 4.20 z-streams give node pools something to upgrade from;
// AvailableUpgrades are the upgrade paths (upgrades.go).
func DefaultVersions() []cs.Version {
	eol := func(y int, m time.Month) time.Time { return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC) }
	return []cs.Version{
		{ID: "openshift-v4.20.8", RawID: "4.20.8", ChannelGroup: "stable", Enabled: true,
			EndOfLife: eol(2027, time.April), AvailableUpgrades: []string{"4.20.10", "4.20.25"}},
		{ID: "openshift-v4.20.10", RawID: "4.20.10", ChannelGroup: "stable", Enabled: true,
			EndOfLife: eol(2027, time.April), AvailableUpgrades: []string{"4.20.25"}},
		{ID: "openshift-v4.20.25", RawID: "4.20.25", ChannelGroup: "stable", Enabled: true,
			EndOfLife: eol(2027, time.April), AvailableUpgrades: []string{"4.21.20"}},
		{ID: "openshift-v4.21.20", RawID: "4.21.20", ChannelGroup: "stable", Enabled: true, Default: true,
			EndOfLife: eol(2027, time.August), AvailableUpgrades: []string{"4.22.1"}},
		{ID: "openshift-v4.22.1", RawID: "4.22.1", ChannelGroup: "stable", Enabled: true,
			EndOfLife: eol(2028, time.January)},
		{ID: "openshift-v4.22.1-candidate", RawID: "4.22.1", ChannelGroup: "candidate", Enabled: true,
			EndOfLife: eol(2028, time.January)},
	}
}

// WithVersions replaces the versions the simulator offers.
func WithVersions(vs []cs.Version) Option {
	return func(s *Simulator) { s.versions = slices.Clone(vs) }
}

// versionFields are the version fields a list can search on.
var versionFields = map[string]func(*cs.Version) string{
	"id":            func(v *cs.Version) string { return v.ID },
	"raw_id":        func(v *cs.Version) string { return v.RawID },
	"channel_group": func(v *cs.Version) string { return v.ChannelGroup },
	"enabled":       func(v *cs.Version) string { return strconv.FormatBool(v.Enabled) },
	"default":       func(v *cs.Version) string { return strconv.FormatBool(v.Default) },
}

func versionObject(v *cs.Version) (*arohcp.Version, error) {
	b := arohcp.NewVersion().
		ID(v.ID).
		HREF(VersionsPath + "/" + v.ID).
		RawID(v.RawID).
		ChannelGroup(v.ChannelGroup).
		Enabled(v.Enabled).
		Default(v.Default).
		HostedControlPlaneEnabled(true).
		HostedControlPlaneDefault(v.Default).
		ReleaseImage(fmt.Sprintf("quay.io/openshift-release-dev/ocp-release:%s-multi", v.RawID))
	if !v.EndOfLife.IsZero() {
		b.EndOfLifeTimestamp(v.EndOfLife)
	}
	if len(v.AvailableUpgrades) > 0 {
		b.AvailableUpgrades(v.AvailableUpgrades...)
	}
	return b.Build()
}

func (s *Simulator) listVersions(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, "VersionList", arohcp.MarshalVersionList,
		func(now time.Time, page, size int) ([]*arohcp.Version, int, error) {
			expr := r.URL.Query().Get("search")
			q, err := parseSearch(expr, versionFields)
			if err != nil {
				return nil, 0, errf(http.StatusBadRequest, "Search expression '%s' is invalid: %v", expr, err)
			}
			var all []*cs.Version
			for i := range s.versions {
				if matchSearch(q, &s.versions[i], versionFields) {
					all = append(all, &s.versions[i])
				}
			}
			slices.SortFunc(all, func(a, b *cs.Version) int { return strings.Compare(a.ID, b.ID) })
			return renderPage(all, page, size, versionObject)
		})
}

func (s *Simulator) getVersion(w http.ResponseWriter, r *http.Request) {
	serveObject(s, w, r, http.StatusOK, arohcp.MarshalVersion,
		func(time.Time) (*arohcp.Version, error) {
			id := r.PathValue("version")
			for i := range s.versions {
				if s.versions[i].ID == id {
					return versionObject(&s.versions[i])
				}
			}
			return nil, errf(http.StatusNotFound, "Version '%s' not found", id)
		})
}

// SetVersions replaces the versions the simulator offers while it runs:
// an upgrade path CS starts or stops offering.
func (s *Simulator) SetVersions(vs []cs.Version) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.versions = slices.Clone(vs)
}
