package lifecycle

// nodePoolDelete is a node pool's delete: done once CS answers 404 for it.
type nodePoolDelete struct{ deletion }

func (nodePoolDelete) work() string { return "node pool deletion" }
