package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

const armApp = "8e9c1f6a-0d53-4d43-9c1e-2b6f4a7b9d01"

func header(claims string) string {
	return base64.StdEncoding.EncodeToString([]byte(`{"auth_typ":"aad","claims":` + claims + `}`))
}

func TestCheck(t *testing.T) {
	required := Policy{Mode: Required, AppIDs: []string{armApp}}
	for _, tc := range []struct {
		name    string
		policy  Policy
		headers []string // values of X-MS-CLIENT-PRINCIPAL
		status  int      // 0: admitted
		reason  string
	}{
		{"ARM by appid", required, []string{header(`[{"typ":"appid","val":"` + armApp + `"}]`)}, 0, ""},
		{"ARM by azp, upper case", required, []string{header(`[{"typ":"azp","val":"` + strings.ToUpper(armApp) + `"}]`)}, 0, ""},
		{"raw URL base64", required, []string{base64.RawURLEncoding.EncodeToString([]byte(`{"claims":[{"typ":"appid","val":"` + armApp + `"}]}`))}, 0, ""},
		{"no principal", required, nil, 401, "no X-MS-CLIENT-PRINCIPAL header"},
		{"two copies", required, []string{header(`[{"typ":"appid","val":"` + armApp + `"}]`), header(`[{"typ":"appid","val":"` + armApp + `"}]`)}, 401, "sent 2 times"},
		{"not base64", required, []string{"%%%"}, 401, "malformed: not base64"},
		{"not JSON", required, []string{base64.StdEncoding.EncodeToString([]byte("appid=" + armApp))}, 401, "malformed: not a JSON object"},
		{"no claims", required, []string{header(`[]`)}, 401, "malformed: no claims"},
		{"no application claim", required, []string{header(`[{"typ":"oid","val":"x"}]`)}, 403, "names no application"},
		{"another application", required, []string{header(`[{"typ":"appid","val":"0b7c5e3d-1111-4222-8333-444455556666"}]`)}, 403, "is not in HCPOPS_ARM_CLIENT_APP_IDS"},
		{"nobody allowed", Policy{Mode: Required}, []string{header(`[{"typ":"appid","val":"` + armApp + `"}]`)}, 403, "HCPOPS_ARM_CLIENT_APP_IDS is empty"},
		{"off", Policy{Mode: None}, nil, 0, ""},
		{"zero policy", Policy{}, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.headers {
				h.Add(HeaderClientPrincipal, v)
			}
			r := tc.policy.Check(h)
			if tc.status == 0 {
				if r != nil {
					t.Fatalf("refused: %+v", r)
				}
				return
			}
			if r == nil || r.Status != tc.status || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("Check = %+v, want %d naming %q", r, tc.status, tc.reason)
			}
			var body struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(r.Body(), &body); err != nil || body.Error.Code != r.Code || body.Error.Message == "" ||
				strings.Contains(string(r.Body()), r.Reason) {
				t.Errorf("body %s: want ARM's error shape, without the logged reason", r.Body())
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	p, err := FromEnv(env(nil))
	if err != nil || p.Mode != Required || len(p.AppIDs) != 0 {
		t.Errorf("unset = %+v, %v; want required, nobody allowed", p, err)
	}
	p, err = FromEnv(env(map[string]string{EnvMode: " NONE ", EnvARMClientAppIDs: strings.ToUpper(armApp) + "; 00000000-0000-0000-0000-000000000001"}))
	if err != nil || p.Mode != None || len(p.AppIDs) != 2 || p.AppIDs[0] != armApp {
		t.Errorf("set = %+v, %v", p, err)
	}
	for _, bad := range []map[string]string{{EnvMode: "optional"}, {EnvARMClientAppIDs: "arm"}} {
		if _, err := FromEnv(env(bad)); err == nil {
			t.Errorf("FromEnv(%v) accepted", bad)
		}
	}
}

func TestAnnounce(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{Mode: None}, `"level":"WARN","msg":"caller check is off`},
		{Policy{Mode: Required}, `"level":"ERROR","msg":"caller check is on but HCPOPS_ARM_CLIENT_APP_IDS is empty`},
		{Policy{Mode: Required, AppIDs: []string{armApp}}, ""},
	} {
		var buf bytes.Buffer
		tc.p.Announce(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)))
		if got := buf.String(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Announce(%+v) wrote %q, want %q", tc.p, got, tc.want)
		}
	}
}
