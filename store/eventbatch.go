package store

import "context"

// MaxEventBatch is the most events one batch request may carry.
const MaxEventBatch = 100

// LogEvents stores a batch of validated events, with their conversions, in
// one transaction of the shared group commit, and returns one result per
// event in order. Each event follows LogEvent's rules: a logId seen before,
// in an earlier request or earlier in the same batch, stores nothing and
// answers the first event. Callers validate each event first (Validate) and
// pass only the valid ones.
func (db *DB) LogEvents(ctx context.Context, appID int64, ins []*EventInput) ([]*EventResult, error) {
	if len(ins) == 0 {
		return nil, nil
	}
	// Validated again here, cheaply, because a store method never trusts
	// its caller to have done so.
	for _, in := range ins {
		if err := in.Validate(); err != nil {
			return nil, err
		}
	}
	active, metrics, err := db.activeWithMetrics(ctx, appID)
	if err != nil {
		return nil, err
	}
	goals := make([][]*liveCampaign, len(ins))
	targets := make([][]metricTarget, len(ins))
	res := make([]*EventResult, len(ins))
	for i, in := range ins {
		goals[i] = goalsOf(active, in.EventID)
		targets[i] = metrics[in.EventID]
		res[i] = &EventResult{Success: true, EventID: in.EventID}
	}
	err = db.batch.do(ctx, func(tx *Tx) error {
		for i, in := range ins {
			if err := tx.logEvent(appID, in, goals[i], targets[i], res[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
