package cmd_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"service/internal/pgtest"
)

// logsOf returns the lines s logged with message msg.
func logsOf(s *e2eServer, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range s.Logs() {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// TestServeTwoProcessesOneLeader: two serve processes on one database
// (one SQLite file, or in the PostgreSQL run one PostgreSQL database)
// elect one leader of the scheduled work. Exactly one logs that it leads,
// with its pid; the other logs that it waits. A campaign scheduled to
// start is started once, with one campaign.started sent once. When the
// leader is killed, the other takes over within the bound and starts the
// next scheduled campaign, also once.
func TestServeTwoProcessesOneLeader(t *testing.T) {
	e := newReplicaEnv(t)
	hooks := newHookReceiver(t)
	e.start(2, "--scheduler-interval", "1s", "--webhook-retry-base", "100ms")
	leaders := e.leaders()
	leader := leaders[0]
	var follower *e2eServer
	for _, s := range e.rs {
		if s != leader {
			follower = s
		}
	}
	lead := logsOf(leader, "leading the scheduled work")
	if len(lead) != 1 || e2eNum(lead[0], "pid") != int64(leader.cmd.Process.Pid) {
		t.Fatalf("the leader's leading lines=%v, want one with its pid %d", lead, leader.cmd.Process.Pid)
	}
	e2eWait(t, 10*time.Second, "the other process to say it waits", func() bool {
		return len(logsOf(follower, "another process leads the scheduled work; waiting to lead")) == 1
	})
	if n := len(logsOf(follower, "leading the scheduled work")); n != 0 {
		t.Fatalf("the other process logged leading %d times while the leader lived", n)
	}
	if !pgtest.Selected() {
		b, err := os.ReadFile(e.db + "-leader")
		if got := strings.TrimSpace(string(b)); err != nil || got != strconv.Itoa(leader.cmd.Process.Pid) {
			t.Fatalf("%s-leader holds %q (%v), want the leader's pid %d", e.db, got, err, leader.cmd.Process.Pid)
		}
	}
	hook := e2eNum(leader.call(t, http.StatusCreated, "POST", "/apps/"+e.app+"/webhooks", e.admin, map[string]any{
		"url": hooks.url, "events": []string{"campaign.started"}}), "id")

	// scheduled creates a draft campaign that the scheduler starts in a
	// second, and waits until it has started and its webhook arrived.
	scheduled := func(s *e2eServer, name string) int64 {
		t.Helper()
		start := time.Now().Add(time.Second)
		id := e.campaign(s, name, start.Add(time.Hour), map[string]any{"status": "draft", "startDate": start.UTC().Format(time.RFC3339Nano)})
		e2eWait(t, 30*time.Second, fmt.Sprintf("campaign %d's campaign.started", id), func() bool {
			return len(hooks.of("campaign.started", id)) > 0
		})
		if got := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d", id), e.admin, nil)["status"]; got != "active" {
			t.Fatalf("campaign %d: status=%v, want active", id, got)
		}
		return id
	}
	first := scheduled(follower, "Scheduled first")
	// Recorded as sent before the kill: a send that the kill cuts short is
	// sent again (delivery is at least once), which is not what this
	// test counts.
	e2eWait(t, 30*time.Second, "the first campaign.started recorded as sent", func() bool {
		for _, d := range webhookDeliveries(follower, t, e.admin, hook) {
			if d["event"] == "campaign.started" && d["status"] != "succeeded" {
				return false
			}
		}
		return true
	})

	killed := time.Now()
	leader.kill()
	// The bound: the survivor asks every 500 ms, and the kernel released
	// the dead leader's lock when it died.
	e2eWait(t, 10*time.Second, "the survivor to lead", func() bool { return len(logsOf(follower, "leading the scheduled work")) == 1 })
	t.Logf("the survivor led %v after the kill", time.Since(killed).Round(time.Millisecond))
	second := scheduled(follower, "Scheduled second")

	// Each start was made once and sent once: one delivery queued for it,
	// and one arrival, however many schedulers ran meanwhile.
	starts := map[int64]int{}
	for _, d := range webhookDeliveries(follower, t, e.admin, hook) {
		if d["event"] == "campaign.started" {
			payload, _ := d["payload"].(map[string]any)
			starts[e2eNum(payload, "campaignId")]++
		}
	}
	for _, id := range []int64{first, second} {
		if n := len(hooks.of("campaign.started", id)); n != 1 {
			t.Fatalf("campaign %d: %d campaign.started arrived, want 1", id, n)
		}
		if starts[id] != 1 {
			t.Fatalf("campaign %d: %d campaign.started deliveries queued, want 1 (all: %v)", id, starts[id], starts)
		}
	}
	if n := len(logsOf(follower, "leading the scheduled work")); n != 1 {
		t.Fatalf("the survivor logged leading %d times, want 1", n)
	}
}
