package lifecycle

// externalAuthUpdate is an external auth's update: it PATCHes the issuer,
// and is done once CS carries it.
type externalAuthUpdate struct{ updating }

func (externalAuthUpdate) work() string { return "external auth update" }
