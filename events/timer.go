package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// TimerInfo is a timer trigger's Data value (the host's TimerInfo, as
// JObject.FromObject writes it).
type TimerInfo struct {
	Schedule TimerSchedule
	// ScheduleStatus is the schedule monitor's view before this run; nil
	// when the monitor is off (useMonitor false, or a sub-minute schedule).
	ScheduleStatus *ScheduleStatus
	// IsPastDue is set on the catch-up run for an occurrence missed while
	// the app was down.
	IsPastDue bool
}

// TimerSchedule carries the only public property of the host's
// TimerSchedule.
type TimerSchedule struct {
	AdjustForDST bool
}

// ScheduleStatus times; Last is the zero time on the first run.
type ScheduleStatus struct {
	Last        Time
	Next        Time
	LastUpdated Time
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
	var wire struct {
		Schedule       json.RawMessage
		ScheduleStatus json.RawMessage
		IsPastDue      json.RawMessage
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return TimerInfo{}, Malformed("%s: %v", field, err)
	}
	var info TimerInfo
	var err error
	if info.IsPastDue, err = decodeBool(field+".IsPastDue", wire.IsPastDue); err != nil {
		return TimerInfo{}, err
	}
	switch Kind(wire.Schedule) {
	case "", "null":
	case "object":
		var sched struct{ AdjustForDST json.RawMessage }
		if err := json.Unmarshal(wire.Schedule, &sched); err != nil {
			return TimerInfo{}, Malformed("%s.Schedule: %v", field, err)
		}
		if info.Schedule.AdjustForDST, err = decodeBool(field+".Schedule.AdjustForDST", sched.AdjustForDST); err != nil {
			return TimerInfo{}, err
		}
	default:
		return TimerInfo{}, Malformed("%s.Schedule is %s; want an object", field, Describe(wire.Schedule))
	}
	switch Kind(wire.ScheduleStatus) {
	case "", "null":
	case "object":
		var st struct{ Last, Next, LastUpdated json.RawMessage }
		if err := json.Unmarshal(wire.ScheduleStatus, &st); err != nil {
			return TimerInfo{}, Malformed("%s.ScheduleStatus: %v", field, err)
		}
		status := &ScheduleStatus{}
		for _, f := range []struct {
			name string
			raw  json.RawMessage
			dst  *Time
		}{{"Last", st.Last, &status.Last}, {"Next", st.Next, &status.Next}, {"LastUpdated", st.LastUpdated, &status.LastUpdated}} {
			if f.dst.Time, err = decodeTime(field+".ScheduleStatus."+f.name, f.raw); err != nil {
				return TimerInfo{}, err
			}
		}
		info.ScheduleStatus = status
	default:
		return TimerInfo{}, Malformed("%s.ScheduleStatus is %s; want an object or null", field, Describe(wire.ScheduleStatus))
	}
	return info, nil
}

func decodeBool(field string, raw json.RawMessage) (bool, error) {
	switch Kind(raw) {
	case "", "null":
		return false, nil
	case "boolean":
		return string(raw) == "true", nil
	default:
		return false, Malformed("%s is %s; want true or false", field, Describe(raw))
	}
}

func decodeTime(field string, raw json.RawMessage) (time.Time, error) {
	switch Kind(raw) {
	case "", "null":
		return time.Time{}, nil
	case "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, Malformed("%s: %v", field, err)
		}
		t, err := ParseTime(s)
		if err != nil {
			return time.Time{}, Malformed("%s: %v", field, err)
		}
		return t, nil
	default:
		return time.Time{}, Malformed("%s is %s; want a timestamp string", field, Describe(raw))
	}
}
