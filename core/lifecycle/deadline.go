package lifecycle

import (
	"time"

	"github.com/hcpops/hcpops/core/document"
)

// deadline is when j must be terminal, unless CS then says the work is
// under way (overdue.go); zero: it has none. It is the request's rule,
// the same for every kind, and a function of the settings and the
// documents alone: the CLI's outlook reckons it with no engine, so the
// two never disagree. j.res is nil when the resource's document is gone;
// only a delete has a deadline then.
func (c *Config) deadline(j *job) time.Time {
	p := &j.op.Properties
	switch p.Request {
	case document.RequestCreate:
		if j.res == nil {
			return time.Time{}
		}
		if t, ok := j.res.CreateOperationCompletionDeadline(); ok {
			return t
		}
		return p.StartTime.Add(c.CreateDeadline)
	case document.RequestDelete:
		return c.deleteDeadline(j)
	case document.RequestUpdate:
		return c.updateDeadline(j)
	}
	return time.Time{} // credentials: none, as upstream's
}

// deleteDeadline is the resource's deleteOperationCompletionDeadline;
// ARO-HCP's legacy path has none.
func (c *Config) deleteDeadline(j *job) time.Time {
	if legacyDelete(j) {
		return time.Time{}
	}
	if j.res != nil {
		if t, ok := j.res.DeleteOperationCompletionDeadline(); ok {
			return t
		}
	}
	return j.op.Properties.StartTime.Add(c.DeleteDeadline)
}

// updateDeadline bounds an update that may change a version (a
// cluster's or a node pool's, whose document names one) by the upgrade
// deadline from its start: CS's upgrade may never end, or CS may lose the
// object. Whether the version changes is CS's to say (the poll compares),
// so every such update has it. An external auth's update has none, as
// upstream's.
func (c *Config) updateDeadline(j *job) time.Time {
	if c.UpgradeDeadline <= 0 || j.res == nil || j.res.Version().ID == "" ||
		j.kind != document.KindCluster && j.kind != document.KindNodePool {
		return time.Time{}
	}
	return j.op.Properties.StartTime.Add(c.UpgradeDeadline)
}
