// Command hcpopsctl, built from here (make build: bin/hcpopsctl), is the
// developer's binary of the asynchronous-operation backend: it serves the
// same custom handler as the Function App's binary (cmd/hcpops) and adds
// what runs beside it. dev runs the whole lifecycle on one machine (the
// embedded store, the Clusters Service simulator, a local Functions host);
// submit writes operations as ARO-HCP's frontend does; status, ops, history
// and doc read what the lifecycle wrote, in the embedded store or in Cosmos
// DB; cs-simulator and bench serve the tests and the benchmark. Each
// command is a file here (submit.go, ops.go, doccmd.go, ...).
package main
