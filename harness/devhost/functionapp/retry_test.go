package functionapp

import (
	"testing"
	"time"
)

func TestParseTimeSpan(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"00:00:05", 5 * time.Second, true},
		{"00:02:00", 2 * time.Minute, true},
		{"01:00:00", time.Hour, true},
		{"1.02:03:04", 26*time.Hour + 3*time.Minute + 4*time.Second, true},
		{"00:00:00.5", 500 * time.Millisecond, true},
		{"00:00:01.0000001", time.Second + 100, true},
		{"5s", 0, false},
		{"00:60:00", 0, false},
		{"24:00:00", 0, false},
		{"00:00", 0, false},
		{"00:00:00.", 0, false},
		{"-00:00:05", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseTimeSpan(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseTimeSpan(%q) = %s, %v; want %s ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestRetryPolicyDelays(t *testing.T) {
	exp := RetryPolicy{Strategy: StrategyExponentialBackoff, MaxRetryCount: 5,
		MinimumInterval: 5 * time.Second, MaximumInterval: 30 * time.Second}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := exp.Delay(i + 1); got != w {
			t.Errorf("exponential Delay(%d) = %s, want %s", i+1, got, w)
		}
	}
	fixed := RetryPolicy{Strategy: StrategyFixedDelay, MaxRetryCount: 2, DelayInterval: time.Second}
	if fixed.Delay(1) != time.Second || fixed.Delay(7) != time.Second {
		t.Errorf("fixed delay varies: %s %s", fixed.Delay(1), fixed.Delay(7))
	}
	if fixed.Exhausted(2) || !fixed.Exhausted(3) {
		t.Errorf("maxRetryCount 2: Exhausted(2)=%v Exhausted(3)=%v", fixed.Exhausted(2), fixed.Exhausted(3))
	}
	forever := RetryPolicy{Strategy: StrategyFixedDelay, MaxRetryCount: -1}
	if forever.Exhausted(1 << 20) {
		t.Error("maxRetryCount -1 must never be exhausted")
	}
}
