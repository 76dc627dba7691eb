package lifecycle

// nodePoolUpdate is a node pool's update: it PATCHes the replicas and
// labels, and is done once CS carries them and the node pool is ready.
type nodePoolUpdate struct{ updating }

func (nodePoolUpdate) work() string { return "node pool update" }
