package dashboard

import (
	"strconv"
	"testing"
	"time"
)

// TestThrottleMakesRoomWithoutForgettingLockouts fills the throttle's
// memory in each way eviction has to choose, and checks what it kept.
func TestThrottleMakesRoomWithoutForgettingLockouts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	flood := func(th *throttle, n int, at time.Time) {
		for i := range n {
			th.failed("addr:flood-"+strconv.Itoa(i), maxAddrFailures, at)
		}
	}
	lock := func(th *throttle, key string, at time.Time) {
		for range maxEmailFailures {
			th.failed(key, maxEmailFailures, at)
		}
	}
	tests := []struct {
		name    string
		run     func(th *throttle)
		at      time.Time // when the checks look
		locked  []string
		tracked []string
		gone    []string
		size    int // how many keys are tracked at the end
	}{
		{
			name: "a lockout outlives a flood of other keys",
			run: func(th *throttle) {
				lock(th, "email:victim", t0)
				flood(th, 2*maxThrottleKeys+50_000, t0.Add(time.Minute))
			},
			at:     t0.Add(2 * time.Minute),
			locked: []string{"email:victim"},
			size:   maxThrottleKeys,
		},
		{
			name: "the oldest unlocked key goes first",
			run: func(th *throttle) {
				th.failed("addr:oldest", maxAddrFailures, t0)
				flood(th, maxThrottleKeys-1, t0.Add(time.Minute))
				th.failed("addr:newest", maxAddrFailures, t0.Add(2*time.Minute))
			},
			at:      t0.Add(3 * time.Minute),
			tracked: []string{"addr:newest", "addr:flood-0"},
			gone:    []string{"addr:oldest"},
			size:    maxThrottleKeys,
		},
		{
			name: "an expired window goes before any live one",
			run: func(th *throttle) {
				lock(th, "email:stale", t0)
				flood(th, maxThrottleKeys-1, t0.Add(10*time.Minute))
				th.failed("addr:new", maxAddrFailures, t0.Add(16*time.Minute))
			},
			at:      t0.Add(16 * time.Minute),
			tracked: []string{"addr:new", "addr:flood-0"},
			gone:    []string{"email:stale"},
			size:    maxThrottleKeys,
		},
		{
			name: "with every key locked out, memory grows rather than a lockout ends",
			run: func(th *throttle) {
				for i := range maxThrottleKeys {
					lock(th, "email:"+strconv.Itoa(i), t0)
				}
				lock(th, "email:last", t0.Add(time.Minute))
			},
			at:     t0.Add(2 * time.Minute),
			locked: []string{"email:0", "email:99999", "email:last"},
			size:   maxThrottleKeys + 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := newThrottle()
			tt.run(th)
			for _, k := range tt.locked {
				if th.blocked(k, maxEmailFailures, tt.at) == 0 {
					t.Errorf("%s is not locked out", k)
				}
			}
			for _, k := range tt.tracked {
				if th.fail[k] == nil {
					t.Errorf("%s was dropped", k)
				}
			}
			for _, k := range tt.gone {
				if th.fail[k] != nil {
					t.Errorf("%s is still tracked", k)
				}
			}
			if len(th.fail) != tt.size || th.open.Len()+th.locked.Len() != len(th.fail) {
				t.Errorf("tracked %d keys (%d open, %d locked), want %d", len(th.fail), th.open.Len(), th.locked.Len(), tt.size)
			}
		})
	}
}
