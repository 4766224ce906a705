package dashboard

import "service/store"

// storeSeries builds a store.DailySeries for chart tests.
type storeSeries struct {
	Days []string
	vs   []store.VariantSeries
}

func (s *storeSeries) add(name string, imp, conv []int64) {
	s.vs = append(s.vs, store.VariantSeries{Name: name, Impressions: imp, Conversions: conv})
}

func (s *storeSeries) DailySeries() *store.DailySeries {
	return &store.DailySeries{Days: s.Days, Variants: s.vs}
}
