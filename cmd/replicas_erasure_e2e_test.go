package cmd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"
)

// TestReplicasE2EErasure: two replicas on one database; one erases a user
// while the other keeps serving that user variants and events. The
// erasure takes everything from before it; the serving replica forgets
// the user it had in memory and assigns them again as a new user (a new
// impression); of the requests racing the erasure, only those after it
// are left; and the campaign's counters keep what the erased life counted.
func TestReplicasE2EErasure(t *testing.T) {
	e := newReplicaEnv(t)
	e.start(2)
	eraser, server := e.rs[0], e.rs[1]
	id := e.campaign(eraser, "Erasure", time.Now().Add(24*time.Hour), map[string]any{"goalEventId": "buy"})
	variant := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", e.app, id)
	events := "/apps/" + e.app + "/events"
	user := "replica-subject"

	if a := server.call(t, http.StatusOK, "POST", variant, e.client, map[string]any{"userId": user}); a["impressionRecorded"] != true {
		t.Fatalf("first variant: %v", a)
	}
	for _, ev := range []string{"view", "view", "buy"} {
		server.call(t, http.StatusCreated, "POST", events, e.client, map[string]any{"eventId": ev, "userId": user, "metadata": map[string]any{"phase": "before"}})
	}

	// The other replica keeps serving the user, one request after the
	// other, until told to stop; it notes when a variant answer recorded
	// a new impression.
	post := func(path string, body any) (int, map[string]any, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", server.base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+e.client)
		req.Header.Set("Content-Type", "application/json")
		resp, err := e2eHTTP.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m, nil
	}
	var mu sync.Mutex
	var recorded []time.Time // when requests that recorded an impression were sent
	sent := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			at := time.Now()
			status, a, err := post(variant, map[string]any{"userId": user})
			if err != nil || status != http.StatusOK {
				t.Errorf("variant during the erasure: %d %v %v", status, a, err)
				return
			}
			if a["impressionRecorded"] == true {
				mu.Lock()
				recorded = append(recorded, at)
				mu.Unlock()
			}
			status, a, err = post(events, map[string]any{"eventId": "view", "userId": user, "metadata": map[string]any{"phase": "traffic", "seq": i}})
			if err != nil || status != http.StatusCreated {
				t.Errorf("event during the erasure: %d %v %v", status, a, err)
				return
			}
			mu.Lock()
			sent = i + 1
			mu.Unlock()
		}
	}()
	// Let the traffic run a moment before the erasure.
	for deadline := time.Now().Add(30 * time.Second); ; {
		mu.Lock()
		n := sent
		mu.Unlock()
		if n >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the serving replica answered fewer than 5 requests in 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Before the traffic, the user was assigned and served from memory:
	// an impression recorded by a request sent once the erasure began is
	// the new life's.
	erasing := time.Now()
	erased := eraser.call(t, http.StatusOK, "DELETE", "/apps/"+e.app+"/users/"+user, e.admin, nil)["erased"].(map[string]any)
	if e2eNum(erased, "assignments") != 1 || e2eNum(erased, "events") < 8 || e2eNum(erased, "profile") != 1 {
		t.Fatalf("erased %v", erased)
	}
	// The serving replica forgets the user within a moment: a request
	// sent after the erasure began assigns them anew.
	for deadline := time.Now().Add(15 * time.Second); ; {
		mu.Lock()
		renewed := len(recorded) > 0 && recorded[len(recorded)-1].After(erasing)
		mu.Unlock()
		if renewed {
			break
		}
		if time.Now().After(deadline) {
			close(stop)
			<-done
			t.Fatal("the serving replica still answers the erased user from memory 15 s after the erasure")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	<-done

	var doc struct {
		Assignments []struct {
			ConvertedAt *string `json:"convertedAt"`
		} `json:"assignments"`
		Events []struct {
			Metadata struct {
				Phase string `json:"phase"`
				Seq   int    `json:"seq"`
			} `json:"metadata"`
		} `json:"events"`
	}
	req, _ := http.NewRequest("GET", eraser.base+"/apps/"+e.app+"/users/"+user+"/export", nil)
	req.Header.Set("Authorization", "Bearer "+e.admin)
	resp, err := e2eHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &doc) != nil {
		t.Fatalf("export: %d %s", resp.StatusCode, raw)
	}
	if len(doc.Assignments) != 1 || doc.Assignments[0].ConvertedAt != nil {
		t.Fatalf("assignments after the erasure: %s", raw)
	}
	var seqs []int
	for _, ev := range doc.Events {
		if ev.Metadata.Phase != "traffic" {
			t.Fatalf("an event from before the erasure is left: %s", raw)
		}
		seqs = append(seqs, ev.Metadata.Seq)
	}
	sort.Ints(seqs)
	mu.Lock()
	total := sent
	mu.Unlock()
	for i, s := range seqs {
		if s != total-len(seqs)+i {
			t.Fatalf("traffic events left %v of %d: not the ones after the erasure", seqs, total)
		}
	}
	// The erased life's impression and conversion stay counted, and the
	// new life's impression is counted beside them.
	a := eraser.call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d/analytics", id), e.admin, nil)
	if e2eNum(a, "totalImpressions") != 2 || e2eNum(a, "totalConversions") != 1 {
		t.Fatalf("analytics after the erasure: impressions %v, conversions %v; want 2 and 1", a["totalImpressions"], a["totalConversions"])
	}
	t.Logf("%d requests served during the run, %d events left after the erasure", total, len(seqs))
}
