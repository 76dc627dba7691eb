package polloperations

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hcpops/hcpops/handlers"
)

// TimerInfo is the timer trigger's Data value.
type TimerInfo struct {
	Schedule Schedule
	// ScheduleStatus is the schedule monitor's view before this run; nil when
	// the monitor is off (useMonitor false, or a sub-minute schedule).
	ScheduleStatus *ScheduleStatus
	// IsPastDue is set on the catch-up run for an occurrence missed while
	// the app was down.
	IsPastDue bool
}

// Schedule carries the only public property of the host's TimerSchedule.
type Schedule struct {
	AdjustForDST bool
}

// ScheduleStatus times; Last is the zero time on the first run.
type ScheduleStatus struct {
	Last        time.Time
	Next        time.Time
	LastUpdated time.Time
}

// ParseHostTime parses a timestamp from the host leniently. Hosts before
// 2023 sent the first run's Last without an offset, and some host paths use
// .NET's en-US DateTime.ToString; a time without an offset is taken as UTC,
// the timezone of an Azure host unless WEBSITE_TIME_ZONE is set.
func ParseHostTime(s string) (time.Time, error) {
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

// DecodeTimerInfo decodes Data.timer. The host sends an object; a JSON
// string holding the object is accepted too. Unknown fields are ignored.
// Errors are bad input naming the field.
func DecodeTimerInfo(raw json.RawMessage) (TimerInfo, error) {
	const field = "Data." + BindingName
	if handlers.JSONKind(raw) == "string" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return TimerInfo{}, handlers.BadInput("%s is not a valid JSON string: %v", field, err)
		}
		if !json.Valid([]byte(s)) {
			return TimerInfo{}, handlers.BadInput("%s is a string, not the TimerInfo object: %q", field, handlers.Preview(s))
		}
		raw = json.RawMessage(s)
	}
	if handlers.JSONKind(raw) != "object" {
		return TimerInfo{}, handlers.BadInput("%s is %s; want the TimerInfo object {Schedule, ScheduleStatus, IsPastDue}", field, handlers.DescribeJSON(raw))
	}
	var wire struct {
		Schedule       json.RawMessage
		ScheduleStatus json.RawMessage
		IsPastDue      json.RawMessage
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return TimerInfo{}, handlers.BadInput("%s: %v", field, err)
	}
	var info TimerInfo
	var err error
	if info.IsPastDue, err = decodeBool(field+".IsPastDue", wire.IsPastDue); err != nil {
		return TimerInfo{}, err
	}
	switch handlers.JSONKind(wire.Schedule) {
	case "", "null":
	case "object":
		var sched struct{ AdjustForDST json.RawMessage }
		if err := json.Unmarshal(wire.Schedule, &sched); err != nil {
			return TimerInfo{}, handlers.BadInput("%s.Schedule: %v", field, err)
		}
		if info.Schedule.AdjustForDST, err = decodeBool(field+".Schedule.AdjustForDST", sched.AdjustForDST); err != nil {
			return TimerInfo{}, err
		}
	default:
		return TimerInfo{}, handlers.BadInput("%s.Schedule is %s; want an object", field, handlers.DescribeJSON(wire.Schedule))
	}
	switch handlers.JSONKind(wire.ScheduleStatus) {
	case "", "null":
	case "object":
		var st struct{ Last, Next, LastUpdated json.RawMessage }
		if err := json.Unmarshal(wire.ScheduleStatus, &st); err != nil {
			return TimerInfo{}, handlers.BadInput("%s.ScheduleStatus: %v", field, err)
		}
		status := &ScheduleStatus{}
		for _, f := range []struct {
			name string
			raw  json.RawMessage
			dst  *time.Time
		}{{"Last", st.Last, &status.Last}, {"Next", st.Next, &status.Next}, {"LastUpdated", st.LastUpdated, &status.LastUpdated}} {
			if *f.dst, err = decodeTime(field+".ScheduleStatus."+f.name, f.raw); err != nil {
				return TimerInfo{}, err
			}
		}
		info.ScheduleStatus = status
	default:
		return TimerInfo{}, handlers.BadInput("%s.ScheduleStatus is %s; want an object or null", field, handlers.DescribeJSON(wire.ScheduleStatus))
	}
	return info, nil
}

func decodeBool(field string, raw json.RawMessage) (bool, error) {
	switch handlers.JSONKind(raw) {
	case "", "null":
		return false, nil
	case "boolean":
		return string(raw) == "true", nil
	default:
		return false, handlers.BadInput("%s is %s; want true or false", field, handlers.DescribeJSON(raw))
	}
}

func decodeTime(field string, raw json.RawMessage) (time.Time, error) {
	switch handlers.JSONKind(raw) {
	case "", "null":
		return time.Time{}, nil
	case "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, handlers.BadInput("%s: %v", field, err)
		}
		t, err := ParseHostTime(s)
		if err != nil {
			return time.Time{}, handlers.BadInput("%s: %v", field, err)
		}
		return t, nil
	default:
		return time.Time{}, handlers.BadInput("%s is %s; want a timestamp string", field, handlers.DescribeJSON(raw))
	}
}
