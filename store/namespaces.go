package store

import (
	"context"
	"database/sql"
	"math"
	"slices"
)

// NamespaceCampaign is a campaign's place in a namespace.
type NamespaceCampaign struct {
	ID     int64      `json:"id"`
	Name   string     `json:"name"`
	Status string     `json:"status"`
	Range  [2]float64 `json:"range"`
}

// NamespaceUsage is one namespace of an app: the campaigns placed in it,
// and the share of users that no active or paused campaign holds, in total
// (free) and as ranges (freeRanges, ascending).
type NamespaceUsage struct {
	ID         string              `json:"id"`
	Campaigns  []NamespaceCampaign `json:"campaigns"`
	Free       float64             `json:"free"`
	FreeRanges [][2]float64        `json:"freeRanges"`
}

// FindNamespaces lists an app's namespaces, by id, each with its campaigns
// that are not archived, by range. A namespace exists while a campaign
// names it. Only active and paused campaigns hold their range: a draft's
// is a plan, and a completed campaign assigns no one.
func (db *DB) FindNamespaces(ctx context.Context, appID int64) ([]NamespaceUsage, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT namespace_id, id, name, status, namespace_start, namespace_end FROM campaigns
		WHERE app_id = ? AND namespace_id IS NOT NULL AND status <> 'archived'
		ORDER BY namespace_id, namespace_start, namespace_end, id`, appID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []NamespaceUsage{}
	for rows.Next() {
		var id string
		var c NamespaceCampaign
		var start, end sql.NullFloat64
		if err := rows.Scan(&id, &c.ID, &c.Name, &c.Status, &start, &end); err != nil {
			return nil, err
		}
		c.Range = [2]float64{start.Float64, end.Float64}
		if len(list) == 0 || list[len(list)-1].ID != id {
			list = append(list, NamespaceUsage{ID: id, Campaigns: []NamespaceCampaign{}})
		}
		ns := &list[len(list)-1]
		ns.Campaigns = append(ns.Campaigns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range list {
		var held [][2]float64
		for _, c := range list[i].Campaigns {
			if c.Status == CampaignActive || c.Status == CampaignPaused {
				held = append(held, c.Range)
			}
		}
		list[i].FreeRanges = freeRanges(held)
		free := 0.0
		for _, r := range list[i].FreeRanges {
			free += r[1] - r[0]
		}
		// Rounded to 12 decimals: the sum of differences of decimal
		// bounds carries binary noise (0.6000000000000001) that no one
		// setting ranges by hand means.
		list[i].Free = math.Round(free*1e12) / 1e12
	}
	return list, nil
}

// freeRanges returns the parts of [0, 1) that none of the half-open ranges
// held covers, ascending.
func freeRanges(held [][2]float64) [][2]float64 {
	held = slices.Clone(held)
	slices.SortFunc(held, func(a, b [2]float64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	free := [][2]float64{}
	at := 0.0
	for _, r := range held {
		if r[0] > at {
			free = append(free, [2]float64{at, r[0]})
		}
		at = max(at, r[1])
	}
	if at < 1 {
		free = append(free, [2]float64{at, 1})
	}
	return free
}
