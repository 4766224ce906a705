package dashboard

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata/dashboard")

// golden compares got with testdata/dashboard/name, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "testdata", "dashboard", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./dashboard -run Chart -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from its golden file; if the change is intended, rerun with -update.\ngot:\n%s", name, got)
	}
}

var chartDays = []string{"2025-03-01", "2025-03-02", "2025-03-03", "2025-03-04", "2025-03-05"}

func TestChartsMatchGoldenFiles(t *testing.T) {
	nan := math.NaN()
	rate := []rateBar{
		{Name: "Control", Rate: 10, Lower: 8.3, Upper: 11.98, HasInterval: true, Control: true},
		{Name: "Green <button>", Rate: 12.5, Lower: 10.6, Upper: 14.7, HasInterval: true},
		{Name: "No traffic", Rate: 0},
	}
	lines := []lineSeries{
		{Name: "Control", Values: []float64{nan, 8, 9.5, 10, 10.2}},
		{Name: "Green", Values: []float64{12, 11, 12.4, 12.5, 12.6}},
	}
	bars := []barSeries{
		{Name: "Control", Values: []int64{0, 120, 130, 90, 110}},
		{Name: "Green", Values: []int64{5, 118, 127, 95, 104}},
	}
	// Many variants with long names, whose legend wraps and whose names
	// the narrow drawing shortens.
	var many []barSeries
	for _, n := range []string{"Control", "Free shipping banner on every product page", "Newsletter sign-up", "Bundle <deal>", "Fifth"} {
		many = append(many, barSeries{Name: n, Values: []int64{3, 4, 5, 6, 7}})
	}
	tests := []struct {
		name string
		svg  string
	}{
		{"rate.svg", rateChart(rate, wideChart)},
		{"cumulative.svg", cumulativeChart(chartDays, lines, wideChart)},
		{"daily.svg", dailyChart(chartDays, bars, wideChart)},
		{"empty.svg", cumulativeChart([]string{"2025-03-01"}, []lineSeries{{Name: "Control", Values: []float64{nan}}}, wideChart)},
		{"rate-narrow.svg", rateChart(rate, narrowChart)},
		{"cumulative-narrow.svg", cumulativeChart(chartDays, lines, narrowChart)},
		{"daily-narrow.svg", dailyChart(chartDays, bars, narrowChart)},
		{"daily-many.svg", dailyChart(chartDays, many, wideChart)},
		{"daily-many-narrow.svg", dailyChart(chartDays, many, narrowChart)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, tt.svg)
			if strings.Contains(tt.svg, "NaN") || strings.Contains(tt.svg, "Inf") || strings.Contains(tt.svg, "<button>") {
				t.Fatalf("chart carries NaN, Inf or unescaped text:\n%s", tt.svg)
			}
		})
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, -3: 1, 0.7: 1, 1: 1, 1.2: 2, 2.2: 2.5, 3: 5, 7: 10, 12: 20, 14.7: 20, 26: 50, 1000: 1000, 1001: 2000} {
		if got := niceCeil(in); math.Abs(got-want) > 1e-9 {
			t.Errorf("niceCeil(%v)=%v, want %v", in, got, want)
		}
	}
}

// seriesCharts accumulates: day 3's rate is all conversions so far over
// all impressions so far, and a day before the first impression has none.
func TestSeriesChartsAreCumulative(t *testing.T) {
	s := &storeSeries{Days: chartDays[:3]}
	s.add("A", []int64{0, 100, 100}, []int64{0, 10, 30})
	lines, bars := seriesCharts(s.DailySeries())
	if !math.IsNaN(lines[0].Values[0]) || lines[0].Values[1] != 10 || lines[0].Values[2] != 20 || bars[0].Values[2] != 100 {
		t.Fatalf("lines=%v bars=%v", lines[0].Values, bars[0].Values)
	}
}
