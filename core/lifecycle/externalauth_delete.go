package lifecycle

// externalAuthDelete is an external auth's delete: done once CS answers
// 404 for it; while CS reports no state the delete goes on.
type externalAuthDelete struct{ deletion }

func (externalAuthDelete) work() string { return "external auth deletion" }
