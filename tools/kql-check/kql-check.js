// Reads [{"name", "query"}] as JSON on stdin and writes, for each query,
// the diagnostics (errors and warnings) of Microsoft's Kusto language
// service: syntax, unknown names and type errors, resolved against
// Application Insights' classic traces table, which log alert rules and
// workbooks scoped to an Application Insights component query.
'use strict';
require('@kusto/language-service-next/bridge.min.js');
require('@kusto/language-service-next/Kusto.Language.Bridge.min.js');

const K = Kusto.Language;
const S = K.Symbols;

// Application Insights' traces table (classic, component-scoped schema).
const tracesColumns = [
  ['timestamp', 'datetime'], ['message', 'string'], ['severityLevel', 'int'], ['itemType', 'string'],
  ['customDimensions', 'dynamic'], ['customMeasurements', 'dynamic'], ['operation_Name', 'string'],
  ['operation_Id', 'string'], ['operation_ParentId', 'string'], ['operation_SyntheticSource', 'string'],
  ['session_Id', 'string'], ['user_Id', 'string'], ['user_AuthenticatedId', 'string'], ['user_AccountId', 'string'],
  ['application_Version', 'string'], ['client_Type', 'string'], ['client_Model', 'string'], ['client_OS', 'string'],
  ['client_IP', 'string'], ['client_City', 'string'], ['client_StateOrProvince', 'string'],
  ['client_CountryOrRegion', 'string'], ['client_Browser', 'string'], ['cloud_RoleName', 'string'],
  ['cloud_RoleInstance', 'string'], ['appId', 'string'], ['appName', 'string'], ['iKey', 'string'],
  ['sdkVersion', 'string'], ['itemId', 'string'], ['itemCount', 'int'], ['_ResourceId', 'string'],
];

function globals() {
  const cols = tracesColumns.map(([n, t]) => new S.ColumnSymbol(n, S.ScalarTypes.GetSymbol(t)));
  const traces = new S.TableSymbol.$ctor4('traces', cols);
  return K.GlobalState.Default.WithDatabase(new S.DatabaseSymbol.ctor('appinsights', [traces]));
}

function check(g, query) {
  const code = K.KustoCode.ParseAndAnalyze(query, g);
  const diags = code.GetDiagnostics();
  const out = [];
  for (let i = 0; i < diags.Count; i++) {
    const d = diags.getItem(i);
    const before = query.slice(0, d.Start);
    const line = before.split('\n').length;
    out.push({ severity: String(d.Severity), line, text: query.slice(d.Start, d.End).slice(0, 60), message: d.Message });
  }
  return out;
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  const g = globals();
  const results = JSON.parse(input).map(({ name, query }) => ({ name, diagnostics: check(g, query) }));
  process.stdout.write(JSON.stringify(results) + '\n');
});
