package dashboard

// Charts are SVG drawn on the server: no chart library and no script, so
// the results page works with JavaScript off and under the dashboard's
// Content-Security-Policy. Colours and fonts are presentation attributes,
// not style attributes, which that policy would refuse. Every text that
// comes from data goes through html.EscapeString; the output is then safe
// to place in a page as template.HTML.

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// palette colours variants in their order; it repeats after eight.
var palette = []string{"#4f46e5", "#f59e0b", "#10b981", "#ef4444", "#06b6d4", "#a855f7", "#84cc16", "#ec4899"}

func colour(i int) string { return palette[i%len(palette)] }

const (
	chartFontFamily = `font-family="system-ui, -apple-system, Segoe UI, sans-serif"`
	inkMuted        = "#64748b"
	inkGrid         = "#e2e8f0"
)

// chartSize is one drawing of the charts. An SVG scales with its viewBox,
// its text included, so one drawing cannot keep its text readable at
// every width: the page carries a wide drawing and a narrow one of each
// chart, and the stylesheet shows the one that fits the card (a container
// query on .chart-card). The wide one is shown from 680 px of card, where
// its 11-unit text is at least 11 px; the narrow one below, where its
// 12.5-unit text in a 340-unit viewBox stays at least 11 px down to a
// card of 300 px (a 360 px phone).
type chartSize struct {
	Class string  // the SVG's class beside "chart": which drawing it is
	W     int     // the viewBox's width
	Font  float64 // the text's size, in viewBox units
	// MaxDays is the most day labels the x axis holds.
	MaxDays int
	// PlotLeft, PlotRight and PlotH place the plot of the day charts.
	PlotLeft, PlotRight, PlotH int
	// NamesAbove puts each variant's name above its bar in the rate
	// chart, rather than in a column of its own to the left.
	NamesAbove bool
}

var (
	wideChart   = chartSize{Class: "wide", W: 680, Font: 11, MaxDays: 8, PlotLeft: 56, PlotRight: 16, PlotH: 200}
	narrowChart = chartSize{Class: "narrow", W: 340, Font: 12.5, MaxDays: 4, PlotLeft: 44, PlotRight: 20, PlotH: 160, NamesAbove: true}
)

// charW is about the width of a character of the chart's text, for
// laying out legends and shortening names.
func (s chartSize) charW() float64 { return 7 * s.Font / 11 }

// fit shortens name to about width units of text, ending it in an
// ellipsis; the results table above the charts has the whole name.
func (s chartSize) fit(name string, width float64) string {
	r := []rune(name)
	n := int(width / s.charW())
	if len(r) <= n || n < 2 {
		return name
	}
	return string(r[:n-1]) + "…"
}

// bothSizes is a chart drawn wide and narrow, for the page to show the one
// that fits.
func bothSizes(draw func(chartSize) string) string {
	return draw(wideChart) + draw(narrowChart)
}

// rateBar is one variant of the conversion-rate chart, in percent.
type rateBar struct {
	Name         string
	Rate         float64
	Lower, Upper float64
	HasInterval  bool
	Control      bool
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten, so axis
// ticks fall on round numbers.
func niceCeil(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// num formats a coordinate: one decimal, no "-0.0".
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	if s == "-0.0" {
		return "0.0"
	}
	return strings.TrimSuffix(s, ".0")
}

// tickLabel formats an axis value without needless decimals.
func tickLabel(v float64, suffix string) string {
	switch {
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f%s", v, suffix)
	case v*10 == math.Trunc(v*10):
		return fmt.Sprintf("%.1f%s", v, suffix)
	default:
		return fmt.Sprintf("%.2f%s", v, suffix)
	}
}

func svgOpen(b *strings.Builder, s chartSize, h int, label string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart %s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" %s font-size="%s">`+"\n",
		s.Class, s.W, h, s.W, h, html.EscapeString(label), chartFontFamily, num(s.Font))
	fmt.Fprintf(b, `<title>%s</title>`+"\n", html.EscapeString(label))
}

// rateChart draws each variant's conversion rate as a bar with its 95%
// interval as a whisker, the names in a column on the left or, narrow,
// each above its bar, which then spans the width.
func rateChart(bars []rateBar, s chartSize) string {
	left, right, top, row := 170, 70, 24, 34
	if s.NamesAbove {
		left, right, top, row = 14, 66, 8, 26+int(s.Font)
	}
	h := top + row*len(bars) + 28
	var b strings.Builder
	svgOpen(&b, s, h, "Conversion rate per variant with 95% interval")
	max := 0.0
	for _, r := range bars {
		max = math.Max(max, r.Rate)
		if r.HasInterval {
			max = math.Max(max, r.Upper)
		}
	}
	max = niceCeil(max)
	x := func(v float64) float64 {
		return float64(left) + float64(s.W-left-right)*math.Min(math.Max(v, 0), max)/max
	}
	base := top + row*len(bars)
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s"/>`+"\n", num(x(v)), top-6, num(x(v)), base, inkGrid)
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", num(x(v)), base+16, inkMuted, tickLabel(v, "%"))
	}
	for i, r := range bars {
		y := top + row*i
		name := r.Name
		if r.Control && !strings.EqualFold(name, "control") {
			name += " (control)"
		}
		if s.NamesAbove {
			fmt.Fprintf(&b, `<text x="%d" y="%s" fill="#0f172a">%s</text>`+"\n", left, num(float64(y)+s.Font), html.EscapeString(s.fit(name, float64(s.W-left))))
			y += int(s.Font) + 4
		} else {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#0f172a">%s</text>`+"\n", left-10, y+15, html.EscapeString(name))
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="14" rx="2" fill="%s" fill-opacity="0.85"/>`+"\n", left, y+4, num(x(r.Rate)-float64(left)), colour(i))
		if r.HasInterval {
			lo, hi, cy := num(x(r.Lower)), num(x(r.Upper)), y+11
			fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#0f172a" stroke-width="1.5"/>`+"\n", lo, cy, hi, cy)
			fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#0f172a" stroke-width="1.5"/>`+"\n", lo, cy-6, lo, cy+6)
			fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#0f172a" stroke-width="1.5"/>`+"\n", hi, cy-6, hi, cy+6)
		}
		end := x(r.Rate)
		if r.HasInterval {
			end = x(r.Upper)
		}
		fmt.Fprintf(&b, `<text x="%s" y="%d" fill="#0f172a">%s</text>`+"\n", num(end+8), y+15, fmt.Sprintf("%.2f%%", r.Rate))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// lineSeries is one variant's value per day; NaN is "no value yet".
type lineSeries struct {
	Name   string
	Values []float64
}

// barSeries is one variant's count per day.
type barSeries struct {
	Name   string
	Values []int64
}

const plotTop = 16

// dayAxis draws the x labels (at most about s.MaxDays) under a plot of n
// days whose day i is centred at cx(i).
func dayAxis(b *strings.Builder, s chartSize, days []string, cx func(int) float64, y int) {
	step := (len(days) + s.MaxDays - 1) / s.MaxDays
	if step < 1 {
		step = 1
	}
	for i := 0; i < len(days); i += step {
		label := days[i]
		if t, err := time.Parse(time.DateOnly, days[i]); err == nil {
			label = t.Format("Jan 2")
		}
		fmt.Fprintf(b, `<text x="%s" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", num(cx(i)), y, inkMuted, html.EscapeString(label))
	}
}

// valueAxis draws horizontal grid lines and their labels for 0..max.
func valueAxis(b *strings.Builder, s chartSize, max float64, suffix string) {
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		y := float64(plotTop+s.PlotH) - float64(s.PlotH)*float64(i)/4
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s"/>`+"\n", s.PlotLeft, num(y), s.W-s.PlotRight, num(y), inkGrid)
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end" fill="%s">%s</text>`+"\n", s.PlotLeft-6, num(y+4), inkMuted, tickLabel(v, suffix))
	}
}

// legendAt is where legend puts each name: its left edge and its row
// (from 0), wrapping to a new row where the width ends.
func legendAt(s chartSize, names []string) (xs, rows []int) {
	x, row := s.PlotLeft, 0
	for _, n := range names {
		w := 28 + int(s.charW()*float64(len([]rune(s.fit(n, float64(s.W-s.PlotLeft-14))))))
		if x > s.PlotLeft && x+w-14 > s.W {
			x, row = s.PlotLeft, row+1
		}
		xs, rows = append(xs, x), append(rows, row)
		x += w
	}
	return xs, rows
}

// legendRows is how many rows legend takes.
func legendRows(s chartSize, names []string) int {
	_, rows := legendAt(s, names)
	if len(rows) == 0 {
		return 1
	}
	return rows[len(rows)-1] + 1
}

// legend draws the variants' colours and names in rows, the first at y.
func legend(b *strings.Builder, s chartSize, names []string, y int) {
	xs, rows := legendAt(s, names)
	for i, n := range names {
		ly := y + rows[i]*legendRow(s)
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" rx="2" fill="%s"/>`+"\n", xs[i], ly-9, colour(i))
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#0f172a">%s</text>`+"\n", xs[i]+14, ly, html.EscapeString(s.fit(n, float64(s.W-s.PlotLeft-14))))
	}
}

// legendRow is the height of a row of the legend.
func legendRow(s chartSize) int { return int(s.Font) + 8 }

// dayChartHeight is the height of a day chart: the plot, the day labels
// and the legend's rows.
func dayChartHeight(s chartSize, names []string) int {
	return plotTop + s.PlotH + 52 + (legendRows(s, names)-1)*legendRow(s)
}

// cumulativeChart draws each variant's cumulative conversion rate (in
// percent) per day as a line.
func cumulativeChart(days []string, series []lineSeries, sz chartSize) string {
	names := make([]string, len(series))
	for i := range series {
		names[i] = series[i].Name
	}
	var b strings.Builder
	svgOpen(&b, sz, dayChartHeight(sz, names), "Cumulative conversion rate per variant per day")
	max := 0.0
	for _, s := range series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				max = math.Max(max, v)
			}
		}
	}
	max = niceCeil(max)
	valueAxis(&b, sz, max, "%")
	left, plotH := float64(sz.PlotLeft), float64(sz.PlotH)
	w := float64(sz.W - sz.PlotLeft - sz.PlotRight)
	cx := func(i int) float64 {
		if len(days) <= 1 {
			return left + w/2
		}
		return left + w*float64(i)/float64(len(days)-1)
	}
	cy := func(v float64) float64 { return plotTop + plotH - plotH*math.Min(v, max)/max }
	dayAxis(&b, sz, days, cx, plotTop+sz.PlotH+16)
	for si, s := range series {
		var pts []string
		for i, v := range s.Values {
			if math.IsNaN(v) {
				continue
			}
			pts = append(pts, num(cx(i))+","+num(cy(v)))
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" points="%s"/>`+"\n", colour(si), strings.Join(pts, " "))
		}
		if len(days) <= 60 {
			for _, p := range pts {
				xy := strings.SplitN(p, ",", 2)
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`+"\n", xy[0], xy[1], colour(si))
			}
		}
	}
	legend(&b, sz, names, plotTop+sz.PlotH+44)
	b.WriteString("</svg>\n")
	return b.String()
}

// dailyChart draws impressions per day as bars stacked by variant.
func dailyChart(days []string, series []barSeries, sz chartSize) string {
	names := make([]string, len(series))
	for i := range series {
		names[i] = series[i].Name
	}
	var b strings.Builder
	svgOpen(&b, sz, dayChartHeight(sz, names), "Impressions per day")
	var max int64
	for i := range days {
		var sum int64
		for _, s := range series {
			sum += s.Values[i]
		}
		max = int64(math.Max(float64(max), float64(sum)))
	}
	top := niceCeil(float64(max))
	if top < 1 {
		top = 1
	}
	valueAxis(&b, sz, top, "")
	plotH := float64(sz.PlotH)
	w := float64(sz.W - sz.PlotLeft - sz.PlotRight)
	slot := w / math.Max(float64(len(days)), 1)
	barW := math.Min(math.Max(slot*0.7, 1), 48)
	cx := func(i int) float64 { return float64(sz.PlotLeft) + slot*(float64(i)+0.5) }
	dayAxis(&b, sz, days, cx, plotTop+sz.PlotH+16)
	for i := range days {
		y := float64(plotTop) + plotH
		for si, s := range series {
			v := s.Values[i]
			if v <= 0 {
				continue
			}
			bh := plotH * float64(v) / top
			y -= bh
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %d</title></rect>`+"\n",
				num(cx(i)-barW/2), num(y), num(barW), num(bh), colour(si), html.EscapeString(days[i]), html.EscapeString(s.Name), v)
		}
	}
	legend(&b, sz, names, plotTop+sz.PlotH+44)
	b.WriteString("</svg>\n")
	return b.String()
}

// diffBar is one treatment of a metric's difference chart: its difference
// from the control with the 95% interval, in the metric's units.
type diffBar struct {
	Name, Colour, Label string
	D, Lo, Hi           float64
	HasD, HasInterval   bool
	Regressed           bool
}

// diffChart draws each treatment's difference from the control as its 95%
// interval, a bar around a mark at the difference, on an axis centred on
// 0; the side where the metric gets worse is shaded. Values are
// multiplied by scale (100 draws a conversion metric in points).
func diffChart(metric string, bars []diffBar, scale float64, direction string, s chartSize) string {
	left, right, top, row := 150, 150, 24, 34
	if s.NamesAbove {
		left, right, top, row = 14, 14, 8, 26+int(s.Font)
	}
	h := top + row*max(len(bars), 1) + 28
	var b strings.Builder
	svgOpen(&b, s, h, metric+": difference from the control with 95% interval")
	m := 0.0
	for _, r := range bars {
		if r.HasD {
			m = math.Max(m, math.Abs(r.D*scale))
		}
		if r.HasInterval {
			m = math.Max(m, math.Max(math.Abs(r.Lo*scale), math.Abs(r.Hi*scale)))
		}
	}
	m = niceCeil(m)
	w := float64(s.W - left - right)
	x := func(v float64) float64 {
		return float64(left) + w*(math.Min(math.Max(v*scale, -m), m)+m)/(2*m)
	}
	base := top + row*max(len(bars), 1)
	// The harmful side: below 0 for a metric that should increase.
	hx, hw := float64(left), w/2
	if direction == "decrease" {
		hx = float64(left) + w/2
	}
	fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="%d" fill="#fef2f2"><title>worse than the control</title></rect>`+"\n", num(hx), top-6, num(hw), base-top+6)
	for i := 0; i <= 4; i++ {
		v := -m + m*float64(i)/2
		xv := float64(left) + w*float64(i)/4
		stroke := inkGrid
		if i == 2 {
			stroke = inkMuted
		}
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="%s"/>`+"\n", num(xv), top-6, num(xv), base, stroke)
		label := tickLabel(math.Abs(v), "")
		if v < 0 {
			label = "−" + label
		} else if v > 0 {
			label = "+" + label
		}
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", num(xv), base+16, inkMuted, label)
	}
	for i, r := range bars {
		y := top + row*i
		label := r.Label
		if !r.HasD {
			label = "too few users"
		}
		if r.Regressed {
			label += " · regressed"
		}
		ink := "#0f172a"
		if r.Regressed {
			ink = "#b91c1c"
		}
		if s.NamesAbove {
			lw := s.charW() * float64(len([]rune(label)))
			fmt.Fprintf(&b, `<text x="%d" y="%s" fill="#0f172a">%s</text>`+"\n", left, num(float64(y)+s.Font), html.EscapeString(s.fit(r.Name, float64(s.W-left-right)-lw-8)))
			fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end" fill="%s">%s</text>`+"\n", s.W-right, num(float64(y)+s.Font), ink, html.EscapeString(label))
			y += int(s.Font) + 4
		} else {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#0f172a">%s</text>`+"\n", left-10, y+15, html.EscapeString(s.fit(r.Name, float64(left-14))))
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", s.W-right+8, y+15, ink, html.EscapeString(s.fit(label, float64(right-8))))
		}
		if r.HasInterval {
			lo, hi := x(r.Lo), x(r.Hi)
			fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="14" rx="2" fill="%s" fill-opacity="0.35" stroke="%s"/>`+"\n", num(lo), y+4, num(math.Max(hi-lo, 1)), r.Colour, r.Colour)
		}
		if r.HasD {
			fmt.Fprintf(&b, `<rect x="%s" y="%d" width="3" height="20" fill="%s"/>`+"\n", num(x(r.D)-1.5), y+1, ink)
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
