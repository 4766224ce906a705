package handlers

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"service/stats"
)

// anaNum reads a JSON number that must be present and not null.
func anaNum(t testing.TB, m map[string]any, k string) float64 {
	t.Helper()
	f, ok := m[k].(float64)
	if !ok {
		t.Fatalf("%s=%v, want a number in %v", k, m[k], m)
	}
	return f
}

// anaNull fails unless every key is present and null.
func anaNull(t testing.TB, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v != nil {
			t.Fatalf("%s=%v (present %v), want null", k, v, ok)
		}
	}
}

func anaClose(t testing.TB, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("%s=%.15g, want %.15g", what, got, want)
	}
}

// anaPValue is the two-sided pooled two-proportion p-value computed as
// Pearson's chi-square of the 2x2 table (z² = χ²).
func anaPValue(c1, n1, c2, n2 float64) float64 {
	a, b, c, d := c1, n1-c1, c2, n2-c2
	den := (a + b) * (c + d) * (a + c) * (b + d)
	if den == 0 {
		return 1
	}
	return stats.ChiSquareSF((a+b+c+d)*(a*d-b*c)*(a*d-b*c)/den, 1)
}

// anaGet fetches the analytics and checks that the body holds no number
// JSON cannot carry.
func (e *testEnv) anaGet(cid int64, key string) map[string]any {
	e.t.Helper()
	rec := e.do("GET", pathf("/v1/campaigns/%d/analytics", cid), key, nil)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("analytics: status=%d: %s", rec.Code, rec.Body)
	}
	if s := rec.Body.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
		e.t.Fatalf("analytics carry NaN/Inf: %s", s)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		e.t.Fatalf("analytics: %v: %s", err, rec.Body)
	}
	return m
}

func TestAnalyticsRoute(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	// Round robin: even users see the control, odd users the treatment.
	const perArm = 150
	conv := [2]int{15, 40}
	for i := range 2 * perArm {
		if got, want := e.evAssign(c.id, map[string]any{"userId": fmt.Sprint("u", i)}), c.variants[i%2]; got != want {
			t.Fatalf("u%d: variant=%d, want %d", i, got, want)
		}
	}
	clock.Add(time.Second)
	for arm, n := range conv {
		for j := range n {
			e.evLog(map[string]any{"eventId": "purchase", "userId": fmt.Sprint("u", 2*j+arm)})
		}
	}

	n := float64(perArm)
	c0, c1 := float64(conv[0]), float64(conv[1])
	p := anaPValue(c1, n, c0, n)
	for _, key := range []string{e.Admin, e.Read} {
		m := e.anaGet(c.id, key)
		if num(m, "campaignId") != c.id || m["status"] != "active" {
			t.Fatalf("campaignId/status=%v/%v", m["campaignId"], m["status"])
		}
		if num(m, "totalImpressions") != 2*perArm || num(m, "totalConversions") != int64(c0+c1) {
			t.Fatalf("totals=%v/%v, want %d/%d", m["totalImpressions"], m["totalConversions"], 2*perArm, int(c0+c1))
		}
		anaClose(t, "averageConversionRate", anaNum(t, m, "averageConversionRate"), (c0+c1)/(2*n)*100)
		anaClose(t, "pValue", anaNum(t, m, "pValue"), p)
		anaClose(t, "confidenceLevel", anaNum(t, m, "confidenceLevel"), (1-p)*100)
		if m["statisticalSignificance"] != (p < 0.05) || p >= 0.05 {
			t.Fatalf("statisticalSignificance=%v, p=%g: the case is meant to be significant", m["statisticalSignificance"], p)
		}
		if num(m, "winningVariantId") != c.variants[1] {
			t.Fatalf("winningVariantId=%v, want %d", m["winningVariantId"], c.variants[1])
		}
		srm, _ := m["sampleRatioMismatch"].(map[string]any)
		if srm == nil || srm["detected"] != false {
			t.Fatalf("sampleRatioMismatch=%v, want not detected", m["sampleRatioMismatch"])
		}
		anaClose(t, "sampleRatioMismatch.pValue", anaNum(t, srm, "pValue"), 1)
		if m["sufficientData"] != false {
			t.Fatalf("sufficientData=%v, want false with %d impressions an arm", m["sufficientData"], perArm)
		}
		vs, _ := m["variants"].([]any)
		if len(vs) != 2 {
			t.Fatalf("variants=%v", m["variants"])
		}
		for i, raw := range vs {
			v := raw.(map[string]any)
			k := fmt.Sprintf("variants[%d].", i)
			cv := float64(conv[i])
			if num(v, "variantId") != c.variants[i] || num(v, "impressions") != perArm || num(v, "conversions") != int64(cv) {
				t.Fatalf("%s=%v", k, v)
			}
			anaClose(t, k+"conversionRate", anaNum(t, v, "conversionRate"), cv/n*100)
			lo, hi, _ := stats.Wilson(int64(cv), perArm, stats.Z95)
			anaClose(t, k+"lowerBound", anaNum(t, v, "lowerBound"), lo*100)
			anaClose(t, k+"upperBound", anaNum(t, v, "upperBound"), hi*100)
			ci, _ := v["confidenceInterval"].(map[string]any)
			if ci == nil || ci["lower"] != v["lowerBound"] || ci["upper"] != v["upperBound"] {
				t.Fatalf("%sconfidenceInterval=%v, bounds %v/%v", k, v["confidenceInterval"], v["lowerBound"], v["upperBound"])
			}
			if i == 0 {
				anaNull(t, v, "uplift", "pValue")
				continue
			}
			anaClose(t, k+"uplift", anaNum(t, v, "uplift"), (c1/n-c0/n)/(c0/n)*100)
			anaClose(t, k+"pValue", anaNum(t, v, "pValue"), p)
		}
	}

	// The campaign's own totals and variant counters agree.
	full := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d", c.id), e.Admin, nil)
	totals, _ := full["analytics"].(map[string]any)
	if totals == nil || num(totals, "totalImpressions") != 2*perArm || num(totals, "totalConversions") != int64(c0+c1) {
		t.Fatalf("campaign analytics=%v", full["analytics"])
	}
	e.evWantConversions(c, int64(conv[0]), int64(conv[1]))

	for _, tc := range []struct {
		name, path, key string
		status          int
		code            string
	}{
		{"ClientKey", pathf("/v1/campaigns/%d/analytics", c.id), e.Cli, http.StatusForbidden, "FORBIDDEN"},
		{"NoKey", pathf("/v1/campaigns/%d/analytics", c.id), "", http.StatusUnauthorized, "UNAUTHORIZED"},
		{"Unknown", pathf("/v1/campaigns/%d/analytics", c.id+100), e.Admin, http.StatusNotFound, "NOT_FOUND"},
		{"NotNumeric", "/v1/campaigns/abc/analytics", e.Admin, http.StatusBadRequest, "INVALID_REQUEST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("GET", tc.path, tc.key, nil)
			if rec.Code != tc.status || errCode(t, rec) != tc.code {
				t.Fatalf("status=%d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.code)
			}
		})
	}
	t.Run("OtherApp", func(t *testing.T) {
		_, admin, _, _ := e.newApp("other", "enterprise", 1000)
		rec := e.do("GET", pathf("/v1/campaigns/%d/analytics", c.id), admin, nil)
		if rec.Code != http.StatusNotFound || errCode(t, rec) != "NOT_FOUND" {
			t.Fatalf("status=%d %s, want 404", rec.Code, rec.Body)
		}
	})
}

func TestAnalyticsRouteZeroCounts(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)

	t.Run("NoImpressions", func(t *testing.T) {
		m := e.anaGet(c.id, e.Admin)
		if num(m, "totalImpressions") != 0 || num(m, "totalConversions") != 0 || anaNum(t, m, "averageConversionRate") != 0 {
			t.Fatalf("totals=%v", m)
		}
		anaNull(t, m, "pValue", "confidenceLevel", "winningVariantId")
		if m["statisticalSignificance"] != false || m["sufficientData"] != false {
			t.Fatalf("significance/sufficient=%v/%v, want false", m["statisticalSignificance"], m["sufficientData"])
		}
		srm := m["sampleRatioMismatch"].(map[string]any)
		anaNull(t, srm, "pValue")
		if srm["detected"] != false {
			t.Fatalf("sampleRatioMismatch=%v", srm)
		}
		for _, v := range m["variants"].([]any) {
			v := v.(map[string]any)
			if anaNum(t, v, "conversionRate") != 0 {
				t.Fatalf("variant=%v", v)
			}
			anaNull(t, v, "uplift", "pValue", "confidenceInterval", "lowerBound", "upperBound")
		}
	})

	t.Run("NoConversions", func(t *testing.T) {
		e.evAssign(c.id, map[string]any{"userId": "a"})
		e.evAssign(c.id, map[string]any{"userId": "b"})
		clock.Add(time.Second)
		e.evLog(map[string]any{"eventId": "view", "userId": "a"})
		m := e.anaGet(c.id, e.Admin)
		if num(m, "totalImpressions") != 2 || num(m, "totalConversions") != 0 || anaNum(t, m, "averageConversionRate") != 0 {
			t.Fatalf("totals=%v", m)
		}
		// No conversion anywhere: n·p̂ = 0 < 5, so the z-test does not
		// apply and there is no p-value.
		anaNull(t, m, "pValue", "confidenceLevel", "winningVariantId")
		if m["statisticalSignificance"] != false {
			t.Fatalf("statisticalSignificance=%v", m["statisticalSignificance"])
		}
		srm := m["sampleRatioMismatch"].(map[string]any)
		anaClose(t, "sampleRatioMismatch.pValue", anaNum(t, srm, "pValue"), 1)
		_, hi, _ := stats.Wilson(0, 1, stats.Z95)
		for _, v := range m["variants"].([]any) {
			v := v.(map[string]any)
			anaClose(t, "lowerBound", anaNum(t, v, "lowerBound"), 0)
			anaClose(t, "upperBound", anaNum(t, v, "upperBound"), hi*100)
			// A control rate of 0 makes the relative uplift undefined.
			anaNull(t, v, "uplift")
			anaNull(t, v, "pValue")
		}
	})

	// 2 impressions against 2, every treatment user converting: the raw
	// z-test says p = 0.046, but n·p̂ = 1 < 5 in each arm, so nothing is
	// decided.
	t.Run("BelowTheTestRule", func(t *testing.T) {
		c := e.evCreateCampaign("signup", nil)
		for i := range 4 {
			e.evAssign(c.id, map[string]any{"userId": fmt.Sprint("s", i)})
		}
		clock.Add(time.Second)
		e.evLog(map[string]any{"eventId": "signup", "userId": "s1"})
		e.evLog(map[string]any{"eventId": "signup", "userId": "s3"})
		m := e.anaGet(c.id, e.Admin)
		if num(m, "totalImpressions") != 4 || num(m, "totalConversions") != 2 {
			t.Fatalf("totals=%v", m)
		}
		if p := anaPValue(2, 2, 0, 2); p >= 0.05 {
			t.Fatalf("raw p=%v: the case is meant to pass 0.05 without the rule", p)
		}
		anaNull(t, m, "pValue", "confidenceLevel", "winningVariantId", "winningVariant")
		if m["statisticalSignificance"] != false {
			t.Fatalf("statisticalSignificance=%v, want false", m["statisticalSignificance"])
		}
		anaNull(t, m["variants"].([]any)[1].(map[string]any), "pValue")
	})

	t.Run("Draft", func(t *testing.T) {
		a := e.mustContent("A", "published")
		d := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{
			"name": "Draft", "variants": []any{map[string]any{"contentViewId": a}, map[string]any{"contentViewId": a}},
		})
		m := e.anaGet(num(d, "id"), e.Admin)
		if m["status"] != "draft" || num(m, "totalImpressions") != 0 || len(m["variants"].([]any)) != 2 {
			t.Fatalf("draft analytics=%v", m)
		}
	})
}
