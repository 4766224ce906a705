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
	chartW    = 680
	chartFont = `font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="11"`
	inkMuted  = "#64748b"
	inkGrid   = "#e2e8f0"
)

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

func svgOpen(b *strings.Builder, h int, label string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" %s>`+"\n",
		chartW, h, chartW, h, html.EscapeString(label), chartFont)
	fmt.Fprintf(b, `<title>%s</title>`+"\n", html.EscapeString(label))
}

// rateChart draws each variant's conversion rate as a bar with its 95%
// interval as a whisker.
func rateChart(bars []rateBar) string {
	const left, right, top, row = 170, 70, 24, 34
	h := top + row*len(bars) + 28
	var b strings.Builder
	svgOpen(&b, h, "Conversion rate per variant with 95% interval")
	max := 0.0
	for _, r := range bars {
		max = math.Max(max, r.Rate)
		if r.HasInterval {
			max = math.Max(max, r.Upper)
		}
	}
	max = niceCeil(max)
	x := func(v float64) float64 { return left + (chartW-left-right)*math.Min(math.Max(v, 0), max)/max }
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
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#0f172a">%s</text>`+"\n", left-10, y+15, html.EscapeString(name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="14" rx="2" fill="%s" fill-opacity="0.85"/>`+"\n", left, y+4, num(x(r.Rate)-left), colour(i))
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

const (
	plotLeft, plotRight, plotTop = 56, 16, 16
	plotH                        = 200
)

// dayAxis draws the x labels (at most about eight) under a plot of n days
// whose day i is centred at cx(i).
func dayAxis(b *strings.Builder, days []string, cx func(int) float64, y int) {
	step := (len(days) + 7) / 8
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
func valueAxis(b *strings.Builder, max float64, suffix string) {
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		y := plotTop + plotH - plotH*float64(i)/4
		fmt.Fprintf(b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s"/>`+"\n", plotLeft, num(y), chartW-plotRight, num(y), inkGrid)
		fmt.Fprintf(b, `<text x="%d" y="%s" text-anchor="end" fill="%s">%s</text>`+"\n", plotLeft-6, num(y+4), inkMuted, tickLabel(v, suffix))
	}
}

// legend draws the variants' colours and names in a row at y.
func legend(b *strings.Builder, names []string, y int) {
	x := plotLeft
	for i, n := range names {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" rx="2" fill="%s"/>`+"\n", x, y-9, colour(i))
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#0f172a">%s</text>`+"\n", x+14, y, html.EscapeString(n))
		x += 28 + 7*len([]rune(n))
	}
}

// cumulativeChart draws each variant's cumulative conversion rate (in
// percent) per day as a line.
func cumulativeChart(days []string, series []lineSeries) string {
	h := plotTop + plotH + 52
	var b strings.Builder
	svgOpen(&b, h, "Cumulative conversion rate per variant per day")
	max := 0.0
	for _, s := range series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				max = math.Max(max, v)
			}
		}
	}
	max = niceCeil(max)
	valueAxis(&b, max, "%")
	w := float64(chartW - plotLeft - plotRight)
	cx := func(i int) float64 {
		if len(days) <= 1 {
			return plotLeft + w/2
		}
		return plotLeft + w*float64(i)/float64(len(days)-1)
	}
	cy := func(v float64) float64 { return plotTop + plotH - plotH*math.Min(v, max)/max }
	dayAxis(&b, days, cx, plotTop+plotH+16)
	names := make([]string, len(series))
	for si, s := range series {
		names[si] = s.Name
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
	legend(&b, names, h-8)
	b.WriteString("</svg>\n")
	return b.String()
}

// dailyChart draws impressions per day as bars stacked by variant.
func dailyChart(days []string, series []barSeries) string {
	h := plotTop + plotH + 52
	var b strings.Builder
	svgOpen(&b, h, "Impressions per day")
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
	valueAxis(&b, top, "")
	w := float64(chartW - plotLeft - plotRight)
	slot := w / math.Max(float64(len(days)), 1)
	barW := math.Min(math.Max(slot*0.7, 1), 48)
	cx := func(i int) float64 { return plotLeft + slot*(float64(i)+0.5) }
	dayAxis(&b, days, cx, plotTop+plotH+16)
	names := make([]string, len(series))
	for i := range series {
		names[i] = series[i].Name
	}
	for i := range days {
		y := float64(plotTop + plotH)
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
	legend(&b, names, h-8)
	b.WriteString("</svg>\n")
	return b.String()
}
