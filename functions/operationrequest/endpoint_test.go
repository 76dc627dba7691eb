package operationrequest

import "testing"

func TestParamsFromURL(t *testing.T) {
	tests := []struct{ url, typ, sub, loc, op string }{
		{"http://h/subscriptions/S/providers/Microsoft.RedHatOpenShift/locations/L/hcpOperationStatuses/O", "hcpOperationStatuses", "S", "L", "O"},
		{"http://h/api/SUBSCRIPTIONS/S/PROVIDERS/microsoft.redhatopenshift/Locations/L/HCPOPERATIONSTATUSES/O?x=1", "hcpOperationStatuses", "S", "L", "O"},
		{"http://h/subscriptions/S/providers/Microsoft.RedHatOpenShift/locations/L/hcpOperationResults/O", "hcpOperationResults", "S", "L", "O"},
		{"http://h/subscriptions/S/providers/Microsoft.RedHatOpenShift/locations/L/hcpOperationResults/O", "hcpOperationStatuses", "", "", ""},
		{"http://h/subscriptions/S/providers/Other.RP/locations/L/hcpOperationStatuses/O", "hcpOperationStatuses", "", "", ""},
		{"http://h/short", "hcpOperationStatuses", "", "", ""},
		{"::bad url", "hcpOperationStatuses", "", "", ""},
	}
	for _, tt := range tests {
		s, l, o := ParamsFromURL(tt.url, tt.typ)
		if s != tt.sub || l != tt.loc || o != tt.op {
			t.Errorf("ParamsFromURL(%q, %q) = %q %q %q", tt.url, tt.typ, s, l, o)
		}
	}
}
