// Package document reads and writes ARO-HCP's own Cosmos DB documents: the
// operation document (a typed envelope that keeps every field it does not
// know) and views over cluster, node pool and external auth documents (a raw
// JSON tree with accessors for the few fields the lifecycle owns).
//
// Everything here is pure: no I/O, no clock and no randomness of its own.
// The shapes follow reference/aro-hcp-data-model.md.
package document
