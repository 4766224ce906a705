package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// benchTargetingDef is a five-rule audience: three attribute rules and two
// event rules. The event rules are negative so that a brand-new user, who
// has logged nothing, matches all five and every rule is evaluated.
const benchTargetingDef = `{"logic":"AND","rules":[
	{"field":"country","operator":"equals","value":"DE"},
	{"field":"plan","operator":"in","value":["pro","enterprise"]},
	{"field":"age","operator":"greater_than_or_equal","value":18},
	{"ruleType":"event","eventId":"refund","operator":"has_not_performed"},
	{"ruleType":"event","eventId":"churn","operator":"not_performed_within","timeWindow":{"value":30,"unit":"days"}}]}`

// benchTargetingAttrs are the attributes every benchmark request sends;
// they satisfy the three attribute rules.
const benchTargetingAttrs = `"attributes":{"country":"DE","plan":"pro","age":30}`

// benchTargetingCampaign is an active two-variant campaign, targeting the
// five-rule audience when targeted, in an app with some logged events. It
// returns the variant path.
func benchTargetingCampaign(b *testing.B, targeted bool) (*testEnv, string) {
	b.Helper()
	e := newEnv(b)
	// Events of other users, so the event rules look through a real index.
	evLogMany(b, e.DB, e.App.ID, 2000)
	var extra map[string]any
	if targeted {
		extra = map[string]any{"audienceId": num(audienceCreate(e, "bench", benchTargetingDef), "id")}
	}
	id := campaignInState(e, campaignBlocks(e, 2), "active", extra)
	return e, pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, id)
}

func benchTargetingBody(user string) string {
	return `{"userId":"` + user + `",` + benchTargetingAttrs + `}`
}

// benchTargetingCheck fails unless the user was assigned, with a new
// impression when recorded.
func benchTargetingCheck(rec *httptest.ResponseRecorder, recorded bool) error {
	want := `"impressionRecorded":` + strconv.FormatBool(recorded) + `}`
	if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), want) {
		return fmt.Errorf("%d %s", rec.Code, rec.Body.String())
	}
	return nil
}

// benchTargeting runs the same requests against a targeted or an
// untargeted campaign: new users (a fresh userId each iteration, whose
// assignment checks the audience) and returning users.
func benchTargeting(b *testing.B, targeted bool) {
	e, path := benchTargetingCampaign(b, targeted)
	auth := "Bearer " + e.Cli
	var seq atomic.Int64
	newBody := func() string { return benchTargetingBody("new-" + strconv.FormatInt(seq.Add(1), 10)) }

	b.Run("New/Serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := benchTargetingCheck(benchServe(e.Srv, path, auth, newBody()), true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("New/Parallel", func(b *testing.B) {
		b.ReportAllocs()
		// Many more requests in flight than cores, as behind a real server.
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := benchTargetingCheck(benchServe(e.Srv, path, auth, newBody()), true); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})

	const users = 1000
	bodies := make([]string, users)
	for i := range bodies {
		bodies[i] = benchTargetingBody("back-" + strconv.Itoa(i))
		if err := benchTargetingCheck(benchServe(e.Srv, path, auth, bodies[i]), true); err != nil {
			b.Fatalf("warm-up: %v", err)
		}
	}
	b.Run("Returning/Serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := benchTargetingCheck(benchServe(e.Srv, path, auth, bodies[i%users]), false); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Returning/Parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := benchTargetingCheck(benchServe(e.Srv, path, auth, bodies[next.Add(1)%users]), false); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkVariantTargeted assigns users of a campaign that targets a
// five-rule audience they match. Compare with BenchmarkVariantUntargeted:
// the target is at most twice its time per request.
func BenchmarkVariantTargeted(b *testing.B) { benchTargeting(b, true) }

// BenchmarkVariantUntargeted sends the same requests to a campaign without
// an audience.
func BenchmarkVariantUntargeted(b *testing.B) { benchTargeting(b, false) }
