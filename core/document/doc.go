// Package document reads and writes ARO-HCP's own Cosmos DB documents, the
// lifecycle's state: the operation document (a typed envelope that keeps
// every member it does not know) and views over cluster, node pool and
// external auth documents (a JSON tree with accessors for the few members
// the lifecycle owns, decoded only as far as an accessor reads until a
// setter needs the rest). Why these are two models, measured against one
// typed model in encoding/json/v2, is docs/decisions/document-model.md.
//
// It is the one owner of a stored document as JSON: the stores edit and
// index documents as an Object (member order and every untouched value
// kept; MarkDeleted is ARO-HCP's soft delete), and the stores, the view
// and the Cosmos query text take whether a document is an active
// operation from Classify and ActiveOperationsQuery here.
//
// Everything here is pure: no I/O, no clock and no randomness of its own.
// The shapes are ARO-HCP's own (its internal/api and internal/database).
package document
