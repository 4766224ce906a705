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
	// Clear reports p < 0.05. Only then is Confidence shown: "7% confidence"
	// for p = 0.93 reads as a weak claim when it is no evidence at all.
	Clear bool
}

// shortfall is how much more one variant needs before the results count.
type shortfall struct {
	Name                     string
	Impressions, Conversions int64
}

// kv is one flattened value of an analysis the page has no layout for.
type kv struct{ Key, Value string }

// compareRow is one treatment's sequential and Bayesian comparison with
// the control.
type compareRow struct {
	store.VariantStats
	Colour string
}

type resultsData struct {
	Campaign  *store.Campaign
	A         *store.Analytics
	Rows      []resultRow
	Compare   []compareRow
	Winner    *store.VariantStats
	Shortfall []shortfall
	MinImp    int
	MinConv   int
	Days      []string
	Timezone  string
	// Engine is the engine that decided, as the analytics answer names it.
	Engine string
	// Bayes is what the Bayesian engine's banner says: its confidence in
	// the winner, or without one the treatment closest to being decided.
	Bayes bayesVerdict
	// The charts, drawn by charts.go, which escapes every text it draws.
	RateSVG, CumulativeSVG, DailySVG template.HTML
	// Metrics are the campaign's secondary metrics and guardrails, each
	// with its table and its chart of differences; Regressed are the
	// guardrail treatments whose regression the banner names.
	Metrics   []metricSection
	Regressed []regression
	// Extra holds analyses the store adds beyond the fields this page lays
	// out, shown as they come until the page learns them.
	Extra []kv
}

// bayesVerdict is the Bayesian engine's verdict in a marketer's terms.
type bayesVerdict struct {
	// Chance is the probability, in percent, that the winner beats the
	// arm it was decided against (Against; "the control" for a winning
	// treatment); without a winner, the best treatment's chance to beat
	// the control.
	Chance  *float64
	Against string
	// Loss is the winning treatment's expected loss, in points.
	Loss *float64
	// Best is the treatment with the best chance when there is no winner.
	Best string
}

func confidenceOf(p *float64) *float64 {
	if p == nil {
		return nil
	}
	c := (1 - *p) * 100
	return &c
}

// bayesOf restates the Bayesian decision the store made (stats.AnalyzeWith):
// a winning treatment's chance to beat the control, or for a winning
// control the weakest of its wins over the treatments it beat.
func bayesOf(a *store.Analytics) bayesVerdict {
	var b bayesVerdict
	if a.WinningVariant != nil && !a.WinningVariant.IsControl {
		if bs := a.WinningVariant.Bayesian; bs != nil {
			b.Chance, b.Loss, b.Against = ptrTo(bs.ChanceToBeatControl*100), ptrTo(bs.ExpectedLoss), "the control"
		}
		return b
	}
	for _, v := range a.Variants {
		bs := v.Bayesian
		if bs == nil {
			continue
		}
		if a.WinningVariant != nil {
			if lose := (1 - bs.ChanceToBeatControl) * 100; bs.ChanceToBeatControl <= 1-stats.BayesThreshold && (b.Chance == nil || lose < *b.Chance) {
				b.Chance, b.Against = &lose, v.VariantName
			}
		} else if c := bs.ChanceToBeatControl * 100; b.Chance == nil || c > *b.Chance {
			b.Chance, b.Best = &c, v.VariantName
		}
	}
	return b
}

func ptrTo[T any](v T) *T { return &v }

// known is the shape of the analytics answer the page lays out: a nil
// known is a field shown as a whole; otherwise its keys are the fields
// shown, and anything else inside is an analysis the page does not know.
type known map[string]known

var knownAnalytics = known{"campaignId": nil, "status": nil, "totalImpressions": nil, "totalConversions": nil,
	"averageConversionRate": nil, "statisticalSignificance": nil, "pValue": nil, "confidenceLevel": nil,
	"winningVariantId": nil, "winningVariant": nil, "metrics": nil, "sampleRatioMismatch": nil, "sufficientData": nil, "statsEngine": nil, "cuped": nil,
	"variants": known{"variantId": nil, "variantName": nil, "isControl": nil, "trafficAllocation": nil, "impressions": nil,
		"conversions": nil, "conversionRate": nil, "uplift": nil, "pValue": nil, "confidenceInterval": nil, "lowerBound": nil,
		"upperBound": nil, "cuped": nil,
		"sequential": known{"pValue": nil, "difference": nil, "confidenceSequence": nil, "uplift": nil, "upliftConfidenceSequence": nil},
		"bayesian":   known{"chanceToBeatControl": nil, "expectedLoss": nil, "controlExpectedLoss": nil, "credibleInterval": nil}}}

// extraAnalyses flattens the analytics fields the page does not lay out
// into path: value lines, so an analysis added to the store shows up
// before the page learns it.
func extraAnalyses(a any) []kv {
	raw, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	var m any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []kv
	unknownFields("", m, knownAnalytics, &out)
	return out
}

// unknownFields walks v against its known shape k, flattening what k
// does not name; array elements share the shape.
func unknownFields(prefix string, v any, k known, out *[]kv) {
	if k == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for key := range x {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			path := key
			if prefix != "" {
				path = prefix + "." + key
			}
			if sub, ok := k[key]; ok {
				unknownFields(path, x[key], sub, out)
			} else {
				flatten(path, x[key], out)
			}
		}
	case []any:
		for i, e := range x {
			unknownFields(fmt.Sprintf("%s[%d]", prefix, i), e, k, out)
		}
	}
}

func flatten(prefix string, v any, out *[]kv) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flatten(prefix+"."+k, x[k], out)
		}
	case []any:
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
	case nil:
		*out = append(*out, kv{prefix, "—"})
	case float64:
		*out = append(*out, kv{prefix, strconv.FormatFloat(x, 'g', 6, 64)})
	default:
		*out = append(*out, kv{prefix, fmt.Sprint(x)})
	}
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
		Days: series.Days, Timezone: series.Timezone, Extra: extraAnalyses(a), Engine: a.StatsEngine}
	if data.Engine == string(stats.EngineBayesian) {
		data.Bayes = bayesOf(a)
	}
	bars := make([]rateBar, len(a.Variants))
	for i, v := range a.Variants {
		data.Rows = append(data.Rows, resultRow{VariantStats: v, Colour: colour(i), Confidence: confidenceOf(v.PValue),
			Clear: v.PValue != nil && *v.PValue < stats.Alpha})
		if !v.IsControl {
			data.Compare = append(data.Compare, compareRow{VariantStats: v, Colour: colour(i)})
		}
		bars[i] = rateBar{Name: v.VariantName, Rate: v.ConversionRate, Control: v.IsControl}
		if v.ConfidenceInterval != nil {
			bars[i].Lower, bars[i].Upper, bars[i].HasInterval = v.ConfidenceInterval.Lower, v.ConfidenceInterval.Upper, true
		}
		if need := shortOf(v); need.Impressions > 0 || need.Conversions > 0 {
			data.Shortfall = append(data.Shortfall, need)
		}
	}
	data.Metrics, data.Regressed = metricSections(a)
	data.RateSVG = template.HTML(bothSizes(func(s chartSize) string { return rateChart(bars, s) }))
	lines, daily := seriesCharts(series)
	data.CumulativeSVG = template.HTML(bothSizes(func(s chartSize) string { return cumulativeChart(series.Days, lines, s) }))
	data.DailySVG = template.HTML(bothSizes(func(s chartSize) string { return dailyChart(series.Days, daily, s) }))
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
	cw.Write(append([]string{"campaignId", "campaignName", "variantId", "variantName", "isControl", "trafficAllocation", "impressions",
		"conversions", "conversionRate", "ciLower95", "ciUpper95", "uplift", "pValue", "confidence", "winner"}, engineCSVColumns...))
	for _, v := range a.Variants {
		var lo, hi *float64
		if v.ConfidenceInterval != nil {
			lo, hi = &v.ConfidenceInterval.Lower, &v.ConfidenceInterval.Upper
		}
		winner := a.WinningVariantID != nil && *a.WinningVariantID == v.VariantID
		rate := v.ConversionRate
		alloc := v.TrafficAllocation
		cw.Write(append([]string{strconv.FormatInt(c.ID, 10), csvCell(c.Name), strconv.FormatInt(v.VariantID, 10), csvCell(v.VariantName),
			strconv.FormatBool(v.IsControl), fmtFloat(&alloc), strconv.FormatInt(v.Impressions, 10), strconv.FormatInt(v.Conversions, 10),
			fmtFloat(&rate), fmtFloat(lo), fmtFloat(hi), fmtFloat(v.Uplift), fmtFloat(v.PValue), fmtFloat(confidenceOf(v.PValue)),
			strconv.FormatBool(winner)}, engineCSVCells(a.StatsEngine, v)...))
	}
	cw.Flush()
}

// engineCSVColumns follow the fixed-horizon columns: the sequential and
// Bayesian figures as the analytics answer names them, then the engine
// that decided the winner column.
var engineCSVColumns = []string{"sequentialPValue", "sequentialDifference", "sequentialDifferenceLower95", "sequentialDifferenceUpper95",
	"sequentialUplift", "sequentialUpliftLower95", "sequentialUpliftUpper95",
	"chanceToBeatControl", "expectedLoss", "controlExpectedLoss", "credibleLower95", "credibleUpper95", "statsEngine"}

// engineCSVCells are a variant's engineCSVColumns, empty where the API
// has null (the control, a variant without impressions).
func engineCSVCells(engine string, v store.VariantStats) []string {
	cells := make([]string, len(engineCSVColumns))
	if s := v.Sequential; s != nil {
		cells[0], cells[1] = fmtFloat(&s.PValue), fmtFloat(&s.Difference)
		cells[2], cells[3] = fmtFloat(&s.ConfidenceSequence.Lower), fmtFloat(&s.ConfidenceSequence.Upper)
		cells[4] = fmtFloat(s.Uplift)
		if u := s.UpliftConfidenceSequence; u != nil {
			cells[5], cells[6] = fmtFloat(&u.Lower), fmtFloat(&u.Upper)
		}
	}
	if b := v.Bayesian; b != nil {
		cells[7], cells[8], cells[9] = fmtFloat(&b.ChanceToBeatControl), fmtFloat(&b.ExpectedLoss), fmtFloat(&b.ControlExpectedLoss)
		cells[10], cells[11] = fmtFloat(&b.CredibleInterval.Lower), fmtFloat(&b.CredibleInterval.Upper)
	}
	cells[12] = engine
	return cells
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

// chance formats a probability given in percent, to one decimal; like
// confidence it never rounds to a certainty.
func chance(p *float64) string {
	switch {
	case p == nil:
		return "—"
	case *p > 99.9:
		return "> 99.9%"
	case *p < 0.1:
		return "< 0.1%"
	}
	return fmt.Sprintf("%.1f%%", *p)
}

// prob is a probability (0 to 1) as the API gives it, shown as chance.
func prob(p float64) string {
	c := p * 100
	return chance(&c)
}

// points formats a difference of conversion rates in percentage points.
func points(p float64) string {
	if math.Abs(p) < 0.0005 {
		return "< 0.001 pts"
	}
	return fmt.Sprintf("%.3f pts", p)
}

// signedPts formats a signed difference in percentage points.
func signedPts(p float64) string { return fmt.Sprintf("%+.2f", p) }

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

// metricSection is one metric of the results page: its table and its
// chart of each treatment's difference from the control.
type metricSection struct {
	store.MetricResult
	Rows  []metricResultRow
	Chart template.HTML
}

// metricResultRow is a variant's line of a metric's table.
type metricResultRow struct {
	store.MetricVariantResult
	Name    string
	Colour  string
	Control bool
}

// regression is a guardrail that a treatment made worse.
type regression struct {
	Metric, Variant string
	MetricID        int64
	Difference      string
}

// metricSections lays out the analytics' metrics, and the regressed
// guardrails for the banner.
func metricSections(a *store.Analytics) ([]metricSection, []regression) {
	names := map[int64]string{}
	index := map[int64]int{}
	control := map[int64]bool{}
	for i, v := range a.Variants {
		names[v.VariantID], index[v.VariantID], control[v.VariantID] = v.VariantName, i, v.IsControl
	}
	var out []metricSection
	var regs []regression
	for _, m := range a.Metrics {
		sec := metricSection{MetricResult: m}
		var bars []diffBar
		for _, v := range m.Variants {
			sec.Rows = append(sec.Rows, metricResultRow{MetricVariantResult: v, Name: names[v.VariantID], Colour: colour(index[v.VariantID]), Control: control[v.VariantID]})
			if control[v.VariantID] {
				continue
			}
			bar := diffBar{Name: names[v.VariantID], Colour: colour(index[v.VariantID]), Regressed: v.Regressed}
			if v.Difference != nil {
				bar.D, bar.HasD = *v.Difference, true
			}
			if v.DifferenceInterval != nil && len(*v.DifferenceInterval) == 2 {
				bar.Lo, bar.Hi, bar.HasInterval = (*v.DifferenceInterval)[0], (*v.DifferenceInterval)[1], true
			}
			bar.Label = metricDiff(m.Type, v.Difference)
			bars = append(bars, bar)
			if v.Regressed {
				regs = append(regs, regression{Metric: m.Name, MetricID: m.MetricID, Variant: names[v.VariantID], Difference: metricDiff(m.Type, v.Difference)})
			}
		}
		scale := 1.0
		if m.Type == store.MetricConversion {
			scale = 100 // drawn in points, as the table shows it
		}
		sec.Chart = template.HTML(bothSizes(func(s chartSize) string { return diffChart(m.Name, bars, scale, m.Direction, s) }))
		out = append(out, sec)
	}
	return out, regs
}

// metricValue formats a mean in the metric's units: a share of users for
// a conversion metric, a number per user otherwise.
func metricValue(typ string, p *float64) string {
	if p == nil {
		return "—"
	}
	if typ == store.MetricConversion {
		return fmt.Sprintf("%.2f%%", *p*100)
	}
	return plainNum(*p)
}

// metricDiff formats a difference of means: percentage points for a
// conversion metric, the metric's own units otherwise.
func metricDiff(typ string, p *float64) string {
	if p == nil {
		return "—"
	}
	if typ == store.MetricConversion {
		return signedPts(*p*100) + " pts"
	}
	s := plainNum(*p)
	if *p >= 0 {
		s = "+" + s
	}
	return s
}

// plainNum shows a figure to about four significant digits, without an
// exponent.
func plainNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return thousands(int64(math.Round(v)))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
