package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TimerInfo is a timer trigger's Data value (the host's TimerInfo, as
// JObject.FromObject writes it).
type TimerInfo struct {
	Schedule TimerSchedule `json:"Schedule"`
	// ScheduleStatus is the schedule monitor's view before this run; nil
	// when the monitor is off (useMonitor false, or a sub-minute schedule).
	ScheduleStatus *ScheduleStatus `json:"ScheduleStatus"`
	// IsPastDue is set on the catch-up run for an occurrence missed while
	// the app was down.
	IsPastDue bool `json:"IsPastDue"`
}

// TimerSchedule carries the only public property of the host's
// TimerSchedule.
type TimerSchedule struct {
	AdjustForDST bool `json:"AdjustForDST"`
}

// ScheduleStatus times; Last is the zero time on the first run.
type ScheduleStatus struct {
	Last        Time `json:"Last"`
	Next        Time `json:"Next"`
	LastUpdated Time `json:"LastUpdated"`
}

// Time is a time as the host writes it: DotNetRoundTrip in the host's own
// zone (the zero time, on a first run, as 0001-01-01T00:00:00+00:00).
// Reading takes whatever ParseTime does.
type Time struct{ time.Time }

// MarshalJSON writes t as the host does.
func (t Time) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.Format(DotNetRoundTrip))
}

// UnmarshalJSON reads a time string leniently (ParseTime).
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// ParseTime parses a timestamp from the host leniently. Hosts before 2023
// sent the first run's Last without an offset, and some host paths use
// .NET's en-US DateTime.ToString; a time without an offset is taken as UTC,
// the timezone of an Azure host unless WEBSITE_TIME_ZONE is set.
func ParseTime(s string) (time.Time, error) {
	layouts := [...]string{
		time.RFC3339Nano,
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999",
		"1/2/2006 3:04:05 PM -07:00",
		"1/2/2006 3:04:05 PM",
		"01/02/2006 15:04:05",
	}
	s = strings.TrimSpace(s)
	for _, layout := range layouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp in any format the host uses", s)
}

// DecodeTimerInfo decodes a timer binding's value; field (Data.timer) names
// it in errors. The host sends an object; a JSON string holding the object
// is accepted too, member names match case-insensitively and unknown
// members are ignored. Errors are *MalformedError naming the field.
func DecodeTimerInfo(field string, raw json.RawMessage) (TimerInfo, error) {
	if Kind(raw) == "string" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return TimerInfo{}, Malformed("%s is not a valid JSON string: %v", field, err)
		}
		if !json.Valid([]byte(s)) {
			return TimerInfo{}, Malformed("%s is a string, not the TimerInfo object: %q", field, Preview(s))
		}
		raw = json.RawMessage(s)
	}
	if Kind(raw) != "object" {
		return TimerInfo{}, Malformed("%s is %s; want the TimerInfo object {Schedule, ScheduleStatus, IsPastDue}", field, Describe(raw))
	}
	var wire timerWire
	if err := json.Unmarshal(raw, &wire); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			for path, want := range timerWants { // te.Field is spelled as the payload spells it
				if strings.EqualFold(path, te.Field) {
					return TimerInfo{}, Malformed("%s.%s is %s; want %s", field, path, describeGo(te.Value), want)
				}
			}
		}
		return TimerInfo{}, Malformed("%s: %v", field, err)
	}
	info := TimerInfo{Schedule: wire.Schedule, IsPastDue: wire.IsPastDue}
	if st := wire.ScheduleStatus; st != nil {
		info.ScheduleStatus = &ScheduleStatus{}
		for _, f := range []struct {
			name string
			text *string
			dst  *Time
		}{{"Last", st.Last, &info.ScheduleStatus.Last}, {"Next", st.Next, &info.ScheduleStatus.Next}, {"LastUpdated", st.LastUpdated, &info.ScheduleStatus.LastUpdated}} {
			if f.text == nil {
				continue
			}
			t, err := ParseTime(*f.text)
			if err != nil {
				return TimerInfo{}, Malformed("%s.ScheduleStatus.%s: %v", field, f.name, err)
			}
			f.dst.Time = t
		}
	}
	return info, nil
}

// timerWire is TimerInfo as the host writes it, with ScheduleStatus's
// times as text (nil when missing or null): read by ParseTime afterwards,
// so that an error can name the member.
type timerWire struct {
	Schedule       TimerSchedule `json:"Schedule"`
	ScheduleStatus *struct {
		Last        *string `json:"Last"`
		Next        *string `json:"Next"`
		LastUpdated *string `json:"LastUpdated"`
	} `json:"ScheduleStatus"`
	IsPastDue bool `json:"IsPastDue"`
}

// timerWants says, for each member of timerWire by its path, what it must
// hold when present.
var timerWants = map[string]string{
	"Schedule":                   "an object",
	"Schedule.AdjustForDST":      "true or false",
	"ScheduleStatus":             "an object or null",
	"ScheduleStatus.Last":        "a timestamp string",
	"ScheduleStatus.Next":        "a timestamp string",
	"ScheduleStatus.LastUpdated": "a timestamp string",
	"IsPastDue":                  "true or false",
}

// describeGo is Describe for the kind encoding/json names in an
// UnmarshalTypeError ("bool", "number", "number 1e999", ...).
func describeGo(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "bool":
		return "a boolean"
	case "array", "object":
		return "an " + kind
	}
	return "a " + kind
}
