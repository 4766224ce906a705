package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// msPerHour is the width of one campaign_variant_hours row.
const msPerHour = 3_600_000

// maxSeriesDays bounds a campaign's daily series; a campaign that ran
// longer shows its last maxSeriesDays days.
const maxSeriesDays = 400

// flushHours adds the transaction's counter increments to the hour they
// happened in. Every operation of a group commit shares tx.now, which is
// also the time stamped on the assignments and conversions counted. ids
// are the variants counted, ascending (see flushCounts).
func (tx *Tx) flushHours(ids []int64) error {
	hour := ms(tx.now) / msPerHour
	for _, id := range ids {
		d := tx.counts[id]
		if _, err := tx.exec(`INSERT INTO campaign_variant_hours (variant_id, hour, impressions, conversions) VALUES (?, ?, ?, ?)
			ON CONFLICT (variant_id, hour) DO UPDATE SET impressions = campaign_variant_hours.impressions + excluded.impressions,
				conversions = campaign_variant_hours.conversions + excluded.conversions`,
			id, hour, d.impressions, d.conversions); err != nil {
			return err
		}
	}
	return nil
}

// DailySeries is a campaign's impressions and conversions per day and
// variant, days cut in the campaign's timezone.
type DailySeries struct {
	Timezone string
	Days     []string // 2006-01-02, consecutive, oldest first
	Variants []VariantSeries
}

// VariantSeries is one variant's numbers per day, aligned with Days.
type VariantSeries struct {
	VariantID   int64
	Name        string
	Impressions []int64
	Conversions []int64
}

// CampaignDailySeries reads a campaign's per-day numbers from the hourly
// counters: at most 24 rows per variant and day, whatever the traffic.
// The series runs from the campaign's start (or its first counted hour)
// to its last counted hour, or to today while it is active or paused.
// An hour belongs to the day, in the campaign's timezone, it starts in.
func (db *DB) CampaignDailySeries(ctx context.Context, appID, id int64) (*DailySeries, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var tz, status string
	var start, end sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT timezone, status, start_at, end_at FROM campaigns WHERE id = ? AND app_id = ?`, id, appID).
		Scan(&tz, &status, &start, &end)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("campaign")
	} else if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	s := &DailySeries{Timezone: tz}
	index := map[int64]int{}
	rows, err := tx.QueryContext(ctx, `SELECT id, name FROM campaign_variants WHERE campaign_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var v VariantSeries
		if err := rows.Scan(&v.VariantID, &v.Name); err != nil {
			rows.Close()
			return nil, err
		}
		index[v.VariantID] = len(s.Variants)
		s.Variants = append(s.Variants, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	type cell struct {
		variant int
		day     string
		imp     int64
		conv    int64
	}
	var cells []cell
	first, last := "", ""
	rows, err = tx.QueryContext(ctx, `SELECT h.variant_id, h.hour, h.impressions, h.conversions FROM campaign_variant_hours AS h
		JOIN campaign_variants AS v ON v.id = h.variant_id WHERE v.campaign_id = ?`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var vid, hour, imp, conv int64
		if err := rows.Scan(&vid, &hour, &imp, &conv); err != nil {
			rows.Close()
			return nil, err
		}
		i, ok := index[vid]
		if !ok {
			continue
		}
		day := fromMS(hour * msPerHour).In(loc).Format(time.DateOnly)
		if first == "" || day < first {
			first = day
		}
		if day > last {
			last = day
		}
		cells = append(cells, cell{i, day, imp, conv})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if start.Valid {
		if d := fromMS(start.Int64).In(loc).Format(time.DateOnly); first == "" || d < first {
			first = d
		}
	}
	if status == CampaignActive || status == CampaignPaused {
		today := db.Now().In(loc)
		if end.Valid && fromMS(end.Int64).Before(today) {
			today = fromMS(end.Int64).In(loc)
		}
		if d := today.Format(time.DateOnly); d > last {
			last = d
		}
	}
	if first == "" || last == "" || last < first {
		return s, nil
	}
	s.Days = daysBetween(first, last)
	pos := make(map[string]int, len(s.Days))
	for i, d := range s.Days {
		pos[d] = i
	}
	for i := range s.Variants {
		s.Variants[i].Impressions = make([]int64, len(s.Days))
		s.Variants[i].Conversions = make([]int64, len(s.Days))
	}
	for _, c := range cells {
		p, ok := pos[c.day]
		if !ok {
			// Before the window of the last maxSeriesDays days: fold it into
			// the first day, so cumulative numbers stay whole.
			p = 0
		}
		s.Variants[c.variant].Impressions[p] += c.imp
		s.Variants[c.variant].Conversions[p] += c.conv
	}
	return s, nil
}

// daysBetween lists the calendar days from first to last (inclusive), at
// most the last maxSeriesDays of them.
func daysBetween(first, last string) []string {
	a, err1 := time.Parse(time.DateOnly, first)
	b, err2 := time.Parse(time.DateOnly, last)
	if err1 != nil || err2 != nil {
		return nil
	}
	if b.Sub(a) > time.Duration(maxSeriesDays-1)*24*time.Hour {
		a = b.AddDate(0, 0, -(maxSeriesDays - 1))
	}
	var out []string
	for d := a; !d.After(b); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out
}
