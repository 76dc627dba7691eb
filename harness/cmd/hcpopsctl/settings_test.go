package main

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hcpops/hcpops/harness/testsupport"
)

// hostSettings are app settings deploy/main.bicep sets for the Functions
// host or the platform; hcpops itself never reads them.
var hostSettings = map[string]string{
	"FUNCTIONS_EXTENSION_VERSION":               "host version",
	"FUNCTIONS_WORKER_RUNTIME":                  "custom handler",
	"WEBSITE_RUN_FROM_PACKAGE":                  "zip deploy",
	"AzureWebJobsStorage__accountName":          "host storage (timer locks, schedule status)",
	"AzureWebJobsStorage__credential":           "host storage identity",
	"AzureWebJobsStorage__clientId":             "host storage identity",
	"APPLICATIONINSIGHTS_CONNECTION_STRING":     "the host ships traces and the handler's lines to Application Insights",
	"APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "keyless ingestion as the user-assigned identity",
}

// readSettings runs `hcpops serve` as the Functions host starts it, once
// per environment, and returns every setting name the code asked for.
// Reading is observed, not declared, so a setting added anywhere in the
// assembly shows up without a list to keep.
func readSettings(t *testing.T, envs ...map[string]string) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]bool{}
	for _, env := range envs {
		getenv := func(k string) string {
			mu.Lock()
			defer mu.Unlock()
			seen[k] = true
			return env[k]
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // serve assembles everything, then stops at once
		_ = run(ctx, []string{"serve"}, getenv, strings.NewReader(""), &strings.Builder{})
	}
	return seen
}

// codeSettings is what serve reads with the embedded store, an
// identity-based Cosmos connection and a key-based one.
func codeSettings(t *testing.T) map[string]bool {
	base := map[string]string{"HCPOPS_DATA_DIR": t.TempDir(), "CLUSTERS_SERVICE_URL": "http://127.0.0.1:9",
		"FUNCTIONS_CUSTOMHANDLER_PORT": testsupport.FreePort(t),
		"HCPOPS_LOG_LEVEL":             "error", "HCPOPS_ARM_CLIENT_APP_IDS": "8e9c1f6a-0d53-4d43-9c1e-2b6f4a7b9d01"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range base {
			m[k] = v
		}
		return m
	}
	legacyPort := with("FUNCTIONS_HTTPWORKER_PORT", base["FUNCTIONS_CUSTOMHANDLER_PORT"])
	delete(legacyPort, "FUNCTIONS_CUSTOMHANDLER_PORT") // the host's older name is read as a fallback
	got := readSettings(t, base, legacyPort,
		with("CosmosDB__accountEndpoint", "https://127.0.0.1:9/"),
		with("CosmosDB", "AccountEndpoint=https://127.0.0.1:9/;AccountKey=a2V5;"))
	if !got["CLUSTERS_SERVICE_URL"] || !got["HCPOPS_LOG_LEVEL"] || !got["CosmosDB__credential"] {
		t.Fatalf("serve read only %v; did the assembly stop early?", got)
	}
	return got
}

// settingsDoc is where the settings table lives.
const settingsDoc = "docs/settings.md"

// readmeSettings parses docs/settings.md's table: name -> default cell.
func readmeSettings(t *testing.T) map[string]string {
	b, err := os.ReadFile(settingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n## The table\n")
	if i < 0 {
		t.Fatal(settingsDoc + " has no ## The table section")
	}
	section := text[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	name := regexp.MustCompile("`([A-Za-z][A-Za-z0-9_]*)`")
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "setting" {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			if strings.ToLower(m[1]) != m[1] { // a setting, not a value such as `or`
				out[m[1]] = strings.TrimSpace(cells[2])
			}
		}
	}
	if len(out) == 0 {
		t.Fatal(settingsDoc + "'s settings table has no rows")
	}
	return out
}

// bicepAppSettings parses the keys of main.bicep's appSettings object.
func bicepAppSettings(t *testing.T, bicep string) map[string]bool {
	i := strings.Index(bicep, "var appSettings = union(")
	if i < 0 {
		t.Fatal("deploy/main.bicep has no `var appSettings = union(`")
	}
	block, _, ok := strings.Cut(bicep[i:], "extraAppSettings")
	if !ok {
		t.Fatal("deploy/main.bicep's appSettings has no extraAppSettings")
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+([A-Za-z_][A-Za-z0-9_]*):`).FindAllStringSubmatch(block, -1) {
		out[m[1]] = true
	}
	return out
}

// TestSettingsAgree: every setting the code reads is documented in
// docs/settings.md's table, and set by deploy/main.bicep when the table calls it
// required; the template sets nothing that neither hcpops nor the host
// reads; the table lists nothing the code no longer reads.
func TestSettingsAgree(t *testing.T) {
	code, readme := codeSettings(t), readmeSettings(t)
	b, err := os.ReadFile("deploy/main.bicep")
	if err != nil {
		t.Fatal(err)
	}
	bicep := bicepAppSettings(t, string(b))
	for _, k := range sorted(code) {
		def, documented := readme[k]
		switch {
		case !documented:
			t.Errorf("%s is read by the code but missing from %s's settings table", k, settingsDoc)
		case strings.HasPrefix(def, "required") && !bicep[k]:
			t.Errorf("%s is required (%s: %q) but deploy/main.bicep does not set it", k, settingsDoc, def)
		}
	}
	for k := range readme {
		if !code[k] {
			t.Errorf("%s documents %s, which the code never reads", settingsDoc, k)
		}
	}
	for _, k := range sorted(bicep) {
		if !code[k] && hostSettings[k] == "" {
			t.Errorf("deploy/main.bicep sets %s, which neither hcpops nor the Functions host reads", k)
		}
	}
}

// TestSettingsComeThroughGetenv: the observation above sees only settings
// read through the injected getenv, so production code must not read the
// process environment itself.
func TestSettingsComeThroughGetenv(t *testing.T) {
	allowed := map[string]bool{
		"harness/store/cosmostest/shared.go": true, // test support
		"harness/testsupport/gocmd.go":       true, // test support: a go command with the test's environment
	}
	// What serve runs; dev, bench and soak are tools around it, and the
	// binaries' mains hand os.Getenv to run.
	skipDirs := map[string]bool{"tools": true, "harness/devhost": true, "harness/benchmark": true, "harness/soak": true, "harness/cmd": true, "cmd": true}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (skipDirs[path] || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || allowed[filepath.ToSlash(path)] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && slices.Contains([]string{"Getenv", "LookupEnv", "Environ"}, sel.Sel.Name) {
					t.Errorf("%s: os.%s; read settings through the injected getenv", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTemplateShape checks what a deployment needs of the template that a
// Bicep compiler (not reachable here) would not check: the prefix's bounds,
// lower-cased names, keyless Application Insights, App Service
// Authentication, and the outputs.
func TestTemplateShape(t *testing.T) {
	b, err := os.ReadFile("deploy/main.bicep")
	if err != nil {
		t.Fatal(err)
	}
	bicep := string(b)
	for _, want := range []string{
		"@minLength(3)\n@maxLength(11)\nparam namePrefix string",
		"var prefix = toLower(namePrefix)",
		"var storageAccountName = take('${compactPrefix}",
		"param cosmosAccountName string = '${prefix}-",
		"resource workspace 'Microsoft.OperationalInsights/workspaces@",
		"resource insights 'Microsoft.Insights/components@",
		"DisableLocalAuth: true",
		"APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identity.properties.clientId};Authorization=AAD'",
		"var monitoringMetricsPublisher = '3913510d-42f4-4e42-8a64-420c390055eb'",
		"name: 'authsettingsV2'",
		"requireAuthentication: true",
		"unauthenticatedClientAction: 'Return401'",
		"allowedApplications: armClientAppIds",
		"HCPOPS_ARM_CLIENT_APP_IDS: join(armClientAppIds, ',')",
		"output functionAppUrl string",
		"output appInsightsId string",
	} {
		if !strings.Contains(bicep, want) {
			t.Errorf("deploy/main.bicep lacks %q", want)
		}
	}
	// Telemetry records are traces: sampling them would skew every query.
	host, err := os.ReadFile("host.json")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`"excludedTypes": "[^"]*\bTrace\b`).Match(host) {
		t.Error("host.json samples traces; the telemetry queries need them all (excludedTypes must include Trace)")
	}
	// Every name built from the prefix uses the lowered one.
	if n := strings.Count(bicep, "namePrefix"); n != 2 {
		t.Errorf("namePrefix is used %d times; only its declaration and toLower(namePrefix) may use it", n)
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
