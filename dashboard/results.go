package dashboard

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"service/stats"
	"service/store"
)

// resultRow is one variant of the results table.
type resultRow struct {
	store.VariantStats
	Colour string
	// Confidence is (1 − p)·100 of the variant's own test against the
	// control; nil for the control.
	Confidence *float64
}

// shortfall is how much more one variant needs before the results count.
type shortfall struct {
	Name                     string
	Impressions, Conversions int64
}

// kv is one flattened value of an analysis the page has no layout for.
type kv struct{ Key, Value string }

type resultsData struct {
	Campaign  *store.Campaign
	A         *store.Analytics
	Rows      []resultRow
	Winner    *store.VariantStats
	Shortfall []shortfall
	MinImp    int
	MinConv   int
	Days      []string
	Timezone  string
	// The charts, drawn by charts.go, which escapes every text it draws.
	RateSVG, CumulativeSVG, DailySVG template.HTML
	// Extra holds analyses the store adds beyond the fields this page lays
	// out (for example other statistics engines), shown as they come.
	Extra []kv
}

func confidenceOf(p *float64) *float64 {
	if p == nil {
		return nil
	}
	c := (1 - *p) * 100
	return &c
}

// knownAnalytics are the fields of the analytics answer the page lays out.
var knownAnalytics = map[string]bool{"campaignId": true, "status": true, "totalImpressions": true, "totalConversions": true,
	"averageConversionRate": true, "statisticalSignificance": true, "pValue": true, "confidenceLevel": true,
	"winningVariantId": true, "winningVariant": true, "variants": true, "sampleRatioMismatch": true, "sufficientData": true}

// extraAnalyses flattens the analytics fields the page does not know into
// path: value lines, so an analysis added to the store shows up here.
func extraAnalyses(a *store.Analytics) []kv {
	raw, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []kv
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(prefix+"."+k, x[k])
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", prefix, i), e)
			}
		case nil:
			out = append(out, kv{prefix, "—"})
		case float64:
			out = append(out, kv{prefix, strconv.FormatFloat(x, 'g', 6, 64)})
		default:
			out = append(out, kv{prefix, fmt.Sprint(x)})
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !knownAnalytics[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		walk(k, m[k])
	}
	return out
}

// results gathers a campaign's numbers: the analytics as the API answers
// them, and the per-day series for the charts. Both read counters only.
func (d *Dashboard) results(r *req) (*resultsData, error) {
	c, err := d.appCampaign(r)
	if err != nil {
		return nil, err
	}
	a, err := d.DB.CampaignAnalytics(r.Context(), r.App.ID, c.ID)
	if err != nil {
		return nil, err
	}
	series, err := d.DB.CampaignDailySeries(r.Context(), r.App.ID, c.ID)
	if err != nil {
		return nil, err
	}
	data := &resultsData{Campaign: c, A: a, Winner: a.WinningVariant, MinImp: stats.MinImpressions, MinConv: stats.MinConversions,
		Days: series.Days, Timezone: series.Timezone, Extra: extraAnalyses(a)}
	bars := make([]rateBar, len(a.Variants))
	for i, v := range a.Variants {
		data.Rows = append(data.Rows, resultRow{VariantStats: v, Colour: colour(i), Confidence: confidenceOf(v.PValue)})
		bars[i] = rateBar{Name: v.VariantName, Rate: v.ConversionRate, Control: v.IsControl}
		if v.ConfidenceInterval != nil {
			bars[i].Lower, bars[i].Upper, bars[i].HasInterval = v.ConfidenceInterval.Lower, v.ConfidenceInterval.Upper, true
		}
		if need := shortOf(v); need.Impressions > 0 || need.Conversions > 0 {
			data.Shortfall = append(data.Shortfall, need)
		}
	}
	data.RateSVG = template.HTML(rateChart(bars))
	lines, daily := seriesCharts(series)
	data.CumulativeSVG = template.HTML(cumulativeChart(series.Days, lines))
	data.DailySVG = template.HTML(dailyChart(series.Days, daily))
	return data, nil
}

// shortOf is what a variant lacks of the minimum sample the statistics
// ask for before the results are trusted.
func shortOf(v store.VariantStats) shortfall {
	return shortfall{Name: v.VariantName, Impressions: max(int64(stats.MinImpressions)-v.Impressions, 0),
		Conversions: max(int64(stats.MinConversions)-v.Conversions, 0)}
}

// seriesCharts turns per-day counts into the cumulative conversion rate
// (in percent; NaN before a variant's first impression) and impressions.
func seriesCharts(s *store.DailySeries) ([]lineSeries, []barSeries) {
	lines := make([]lineSeries, len(s.Variants))
	bars := make([]barSeries, len(s.Variants))
	for i, v := range s.Variants {
		lines[i] = lineSeries{Name: v.Name, Values: make([]float64, len(s.Days))}
		bars[i] = barSeries{Name: v.Name, Values: v.Impressions}
		var imp, conv int64
		for day := range s.Days {
			imp += v.Impressions[day]
			conv += v.Conversions[day]
			lines[i].Values[day] = math.NaN()
			if imp > 0 {
				lines[i].Values[day] = float64(conv) / float64(imp) * 100
			}
		}
	}
	return lines, bars
}

func (d *Dashboard) handleResults(w http.ResponseWriter, r *req) {
	data, err := d.results(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := d.page(r, "campaigns", data.Campaign.Name)
	v.Data = data
	d.render(w, r.Request, http.StatusOK, "results", v)
}

func fmtFloat(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// handleResultsCSV exports the results table: one row per variant, the
// numbers at full precision, as the API gives them.
func (d *Dashboard) handleResultsCSV(w http.ResponseWriter, r *req) {
	c, err := d.appCampaign(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	a, err := d.DB.CampaignAnalytics(r.Context(), r.App.ID, c.ID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="campaign-%d-results.csv"`, c.ID))
	h.Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	cw.Write([]string{"campaignId", "campaignName", "variantId", "variantName", "isControl", "trafficAllocation", "impressions",
		"conversions", "conversionRate", "ciLower95", "ciUpper95", "uplift", "pValue", "confidence", "winner"})
	for _, v := range a.Variants {
		var lo, hi *float64
		if v.ConfidenceInterval != nil {
			lo, hi = &v.ConfidenceInterval.Lower, &v.ConfidenceInterval.Upper
		}
		winner := a.WinningVariantID != nil && *a.WinningVariantID == v.VariantID
		rate := v.ConversionRate
		alloc := v.TrafficAllocation
		cw.Write([]string{strconv.FormatInt(c.ID, 10), csvCell(c.Name), strconv.FormatInt(v.VariantID, 10), csvCell(v.VariantName),
			strconv.FormatBool(v.IsControl), fmtFloat(&alloc), strconv.FormatInt(v.Impressions, 10), strconv.FormatInt(v.Conversions, 10),
			fmtFloat(&rate), fmtFloat(lo), fmtFloat(hi), fmtFloat(v.Uplift), fmtFloat(v.PValue), fmtFloat(confidenceOf(v.PValue)),
			strconv.FormatBool(winner)})
	}
	cw.Flush()
}

type previewVariant struct {
	V       *store.Variant
	Block   *store.ContentView
	Items   []editItem
	Missing bool
}

type previewData struct {
	Campaign *store.Campaign
	Variants []previewVariant
}

// handlePreview renders what each variant shows, as the content editor's
// preview renders a block.
func (d *Dashboard) handlePreview(w http.ResponseWriter, r *req) {
	c, err := d.appCampaign(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	data := previewData{Campaign: c}
	for _, v := range c.Variants {
		pv := previewVariant{V: v}
		b, err := d.DB.FindContentByID(r.Context(), r.App.ID, v.ContentViewID)
		switch {
		case store.ErrorCode(err) == store.ENOTFOUND:
			pv.Missing = true
		case err != nil:
			d.fail(w, r, err)
			return
		default:
			pv.Block, pv.Items = b, itemsFromJSON(b.Items)
		}
		data.Variants = append(data.Variants, pv)
	}
	v := d.page(r, "campaigns", c.Name)
	v.Data = data
	d.render(w, r.Request, http.StatusOK, "campaign_preview", v)
}

// pct formats a percentage for the page.
func pct(p any) string {
	switch v := p.(type) {
	case float64:
		return fmt.Sprintf("%.2f%%", v)
	case *float64:
		if v == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f%%", *v)
	}
	return ""
}

// confidence formats a confidence level; it never rounds up to a
// certainty no test gives.
func confidence(p *float64) string {
	switch {
	case p == nil:
		return "—"
	case *p > 99.99:
		return "> 99.99%"
	}
	return fmt.Sprintf("%.2f%%", *p)
}

// pExpr is a p-value as a statement: "p = 0.0312" or "p < 0.0001".
func pExpr(p *float64) string {
	if p != nil && *p < 0.0001 {
		return "p < 0.0001"
	}
	return "p = " + pval(p)
}

// signedPct formats an uplift.
func signedPct(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%+.2f%%", *p)
}

// pval formats a p-value with four decimals, or as "< 0.0001".
func pval(p *float64) string {
	switch {
	case p == nil:
		return "—"
	case *p < 0.0001:
		return "< 0.0001"
	}
	return fmt.Sprintf("%.4f", *p)
}

// exact is a number in full precision for data-value attributes, which
// tests compare against the API's JSON.
func exact(p any) string {
	switch v := p.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case *float64:
		if v == nil {
			return "null"
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// thousands formats a count with thin separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
