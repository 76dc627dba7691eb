// The tests of deploy/'s artifacts: the template and its alert and SLO
// rules, the workbook, every shipped KQL text and the runbooks' queries.
// They hold each to what the Function App writes: apptest's runs drive
// the production assembly, and each query's Go evaluation reads their
// records.
package deploy_test

import "github.com/hcpops/hcpops/harness/apptest"

// runs are apptest's runs, made once for the test binary.
var runs apptest.Shared
