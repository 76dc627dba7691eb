package events

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	plus2 := time.FixedZone("", 2*3600)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2025-03-14T09:25:00.0132417+00:00", time.Date(2025, 3, 14, 9, 25, 0, 13241700, time.UTC)},
		{"2025-03-14T09:30:00Z", time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)},
		{"2022-10-11T10:52:00.003967+02:00", time.Date(2022, 10, 11, 10, 52, 0, 3967000, plus2)},
		{"0001-01-01T00:00:00", time.Time{}},
		{"0001-01-01T00:00:00+00:00", time.Time{}},
		{"2026-03-14T09:30:00.5", time.Date(2026, 3, 14, 9, 30, 0, 500000000, time.UTC)},
		{"2026-03-14 09:30:00", time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)},
		{"3/14/2026 9:30:00 AM", time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)},
		{"3/14/2026 9:30:00 PM +02:00", time.Date(2026, 3, 14, 21, 30, 0, 0, plus2)},
		{"03/14/2026 21:30:00", time.Date(2026, 3, 14, 21, 30, 0, 0, time.UTC)},
		{" 2026-03-14T09:30:00Z ", time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-03-14T25:00:00Z", "14/03/2026 09:30:00"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
}

func TestDecodeTimerInfo(t *testing.T) {
	next := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		raw  string
		want TimerInfo
	}{
		{"full", `{"Schedule":{"AdjustForDST":true},"ScheduleStatus":{"Last":"0001-01-01T00:00:00","Next":"2026-03-14T09:30:00+00:00","LastUpdated":"0001-01-01T00:00:00"},"IsPastDue":true}`,
			TimerInfo{Schedule: TimerSchedule{AdjustForDST: true}, ScheduleStatus: &ScheduleStatus{Next: Time{next}}, IsPastDue: true}},
		{"null status", `{"Schedule":{"AdjustForDST":false},"ScheduleStatus":null,"IsPastDue":false}`, TimerInfo{}},
		{"empty object", `{}`, TimerInfo{}},
		{"lower-case keys", `{"schedule":{"adjustForDST":true},"isPastDue":true}`, TimerInfo{Schedule: TimerSchedule{AdjustForDST: true}, IsPastDue: true}},
		{"string-encoded", `"{\"IsPastDue\":true}"`, TimerInfo{IsPastDue: true}},
		{"unknown fields ignored", `{"IsPastDue":false,"Extra":[1,2]}`, TimerInfo{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTimerInfo("Data.timer", json.RawMessage(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !equalInfo(got, tt.want) {
				t.Errorf("got %+v (%+v), want %+v (%+v)", got, got.ScheduleStatus, tt.want, tt.want.ScheduleStatus)
			}
		})
	}
}

func TestDecodeTimerInfoErrorsNameTheField(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"IsPastDue":"yes"}`, "Data.timer.IsPastDue is a string; want true or false"},
		{`{"isPastDue":1.5}`, "Data.timer.IsPastDue is a number; want true or false"},
		{`{"Schedule":[1]}`, "Data.timer.Schedule is an array; want an object"},
		{`{"Schedule":{"AdjustForDST":{}}}`, "Data.timer.Schedule.AdjustForDST is an object; want true or false"},
		{`{"ScheduleStatus":true}`, "Data.timer.ScheduleStatus is a boolean; want an object or null"},
		{`{"ScheduleStatus":{"Next":17}}`, "Data.timer.ScheduleStatus.Next is a number; want a timestamp string"},
		{`{"ScheduleStatus":{"LastUpdated":""}}`, `Data.timer.ScheduleStatus.LastUpdated: "" is not a timestamp in any format the host uses`},
		{`{"ScheduleStatus":{"last":"noon"}}`, `Data.timer.ScheduleStatus.Last: "noon" is not a timestamp in any format the host uses`},
		{`[]`, "Data.timer is an array; want the TimerInfo object {Schedule, ScheduleStatus, IsPastDue}"},
		{`"nope"`, `Data.timer is a string, not the TimerInfo object: "nope"`},
	}
	for _, tt := range tests {
		_, err := DecodeTimerInfo("Data.timer", json.RawMessage(tt.raw))
		if !IsMalformed(err) || err.Error() != tt.want {
			t.Errorf("DecodeTimerInfo(%s) = %v\nwant %s", tt.raw, err, tt.want)
		}
	}
}

func equalInfo(a, b TimerInfo) bool {
	if a.IsPastDue != b.IsPastDue || a.Schedule != b.Schedule || (a.ScheduleStatus == nil) != (b.ScheduleStatus == nil) {
		return false
	}
	if a.ScheduleStatus == nil {
		return true
	}
	x, y := a.ScheduleStatus, b.ScheduleStatus
	return x.Last.Equal(y.Last.Time) && x.Next.Equal(y.Next.Time) && x.LastUpdated.Equal(y.LastUpdated.Time)
}

// FuzzDecodeTimerInfo: any input either fails with a bad-input error, or
// yields a TimerInfo that survives a round trip through the host's shape.
func FuzzDecodeTimerInfo(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		var env struct{ Data map[string]json.RawMessage }
		if json.Unmarshal(readFile(f, filepath.Base(name)), &env) != nil {
			continue // documents.json is the plain source array, not a payload
		}
		for _, v := range env.Data {
			f.Add([]byte(v))
		}
	}
	for _, seed := range []string{`{}`, `null`, `"{}"`, `{"IsPastDue":1}`, `{"ScheduleStatus":{"Last":"3/14/2026 9:30:00 AM"}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		info, err := DecodeTimerInfo("Data.timer", raw)
		if err != nil {
			if !IsMalformed(err) {
				t.Fatalf("error is not bad input: %v", err)
			}
			return
		}
		wire := map[string]any{"Schedule": map[string]bool{"AdjustForDST": info.Schedule.AdjustForDST}, "IsPastDue": info.IsPastDue, "ScheduleStatus": nil}
		if st := info.ScheduleStatus; st != nil {
			wire["ScheduleStatus"] = map[string]string{
				"Last": st.Last.Format(time.RFC3339Nano), "Next": st.Next.Format(time.RFC3339Nano), "LastUpdated": st.LastUpdated.Format(time.RFC3339Nano),
			}
		}
		again, _ := json.Marshal(wire)
		info2, err := DecodeTimerInfo("Data.timer", again)
		if err != nil {
			if strings.Contains(err.Error(), "not a timestamp") {
				return // years beyond 9999 or before 0 format outside RFC 3339
			}
			t.Fatalf("round trip of %s: %v", again, err)
		}
		if !equalInfo(info, info2) {
			t.Fatalf("round trip changed %s", again)
		}
	})
}
