package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"sync"

	"service/rules"
)

// Evaluation says where a campaign of the ruleset is evaluated.
const (
	// EvaluationLocal: a weighted campaign whose audience, if any, has
	// attribute rules only. An SDK can assign its users from the ruleset
	// alone, with the hash, the namespace and the rules.
	EvaluationLocal = "local"
	// EvaluationRemote: round robin (a counter in the database decides),
	// rules on events (the database holds them), or an archived audience.
	// An SDK asks the variant route.
	EvaluationRemote = "remote"
)

// Ruleset is what an SDK needs to evaluate the app's active campaigns in
// process: GET /apps-external/{appId}/ruleset. Body is the whole answer,
// encoded once per change; Version is a hash of it, so every replica that
// reads the same data names it alike, and any change to the answer, and
// only such a change, moves it.
type Ruleset struct {
	Version   string
	Body      []byte
	Campaigns []RulesetCampaign
	// updated is the latest change to the app's campaigns, blocks and
	// audiences (ms), GrowthBook's dateUpdated.
	updated int64

	gbOnce sync.Once
	gb     *Payload
}

// RulesetCampaign is one active campaign of a ruleset.
type RulesetCampaign struct {
	ID             int64  `json:"id"`
	Key            string `json:"key"`
	Evaluation     string `json:"evaluation"`
	AssignmentType string `json:"assignmentType"`
	// Namespace is {"id","range":[start,end]}: a user is in when
	// start <= hashV1("__"+id, userKey) < end (assign.InNamespace),
	// GrowthBook's namespace; null: every user.
	Namespace *Namespace `json:"namespace"`
	// Audience is the audience's definition; null: everyone.
	Audience json.RawMessage  `json:"audience"`
	Variants []RulesetVariant `json:"variants"`

	// def is the compiled audience, for the GrowthBook payload; nil
	// without one.
	def *rules.Definition
}

// RulesetVariant is one variant of a ruleset's campaign, in ascending id
// order: the order of the hash ranges.
type RulesetVariant struct {
	ID                int64   `json:"id"`
	Name              string  `json:"name"`
	TrafficAllocation float64 `json:"trafficAllocation"`
	ContentViewID     *int64  `json:"contentViewId"`
	IsControl         bool    `json:"isControl"`
}

// Def returns the campaign's compiled audience; nil without one.
func (c *RulesetCampaign) Def() *rules.Definition { return c.def }

// Ruleset returns the app's ruleset, from memory between two changes:
// every change to campaigns, content or audiences moves the generation,
// and the first request after it reads the ruleset again.
func (db *DB) Ruleset(ctx context.Context, appID int64) (*Ruleset, error) {
	gen := db.gen.Load()
	db.cache.mu.RLock()
	rs, ok := db.cache.rulesets[appID]
	ok = ok && db.cache.gen == gen
	db.cache.mu.RUnlock()
	if ok {
		return rs, nil
	}
	rs, err := db.loadRuleset(ctx, appID)
	if err != nil {
		return nil, err
	}
	db.cache.put(gen, func() { db.cache.rulesets[appID] = rs })
	return rs, nil
}

// loadRuleset reads and encodes the app's ruleset. Everything is ordered
// by id, so that the same data gives the same bytes, and version, on
// every replica.
func (db *DB) loadRuleset(ctx context.Context, appID int64) (*Ruleset, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT c.id, c.key, c.assignment_type, c.namespace_id, c.namespace_start, c.namespace_end,
		a.id, a.status, a.definition
		FROM campaigns c LEFT JOIN audiences a ON a.id = c.audience_id
		WHERE c.app_id = ? AND c.status = 'active' ORDER BY c.id`, appID)
	if err != nil {
		return nil, err
	}
	campaigns := []RulesetCampaign{}
	byID := map[int64]int{}
	for rows.Next() {
		var c RulesetCampaign
		var key, nsID, aStatus, def sql.NullString
		var nsStart, nsEnd sql.NullFloat64
		var aID sql.NullInt64
		if err := rows.Scan(&c.ID, &key, &c.AssignmentType, &nsID, &nsStart, &nsEnd, &aID, &aStatus, &def); err != nil {
			rows.Close()
			return nil, err
		}
		c.Key = key.String
		c.Namespace = scanNamespace(nsID, nsStart, nsEnd)
		c.Evaluation = EvaluationLocal
		if c.AssignmentType != AssignWeighted {
			c.Evaluation = EvaluationRemote
		}
		if aID.Valid {
			c.Audience = json.RawMessage(def.String)
			d, _ := rules.Compile([]byte(def.String), "definition")
			switch {
			case d == nil || !json.Valid(c.Audience):
				// Stored definitions were compiled when saved; one that no
				// longer compiles is the variant route's to judge.
				c.Audience = json.RawMessage("null")
				c.Evaluation = EvaluationRemote
			case aStatus.String != AudienceActive || d.NeedsEvents():
				c.Evaluation = EvaluationRemote
			default:
				c.def = d
			}
		}
		c.Variants = []RulesetVariant{}
		byID[c.ID] = len(campaigns)
		campaigns = append(campaigns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	contentViews := []*ContentView{}
	if len(campaigns) > 0 {
		if err := db.rulesetVariants(ctx, appID, campaigns, byID); err != nil {
			return nil, err
		}
		if contentViews, err = db.rulesetContent(ctx, appID); err != nil {
			return nil, err
		}
	}
	rs, err := encodeRuleset(campaigns, contentViews)
	if err != nil {
		return nil, err
	}
	// Read after the rest: a change committed meanwhile moves the
	// generation, and this ruleset is then read again.
	var updated sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT MAX(m) FROM (
		SELECT MAX(updated_at) AS m FROM campaigns WHERE app_id = ?
		UNION ALL SELECT MAX(updated_at) FROM content_views WHERE app_id = ?
		UNION ALL SELECT MAX(updated_at) FROM audiences WHERE app_id = ?) t`, appID, appID, appID).Scan(&updated); err != nil {
		return nil, err
	}
	rs.updated = updated.Int64
	return rs, nil
}

func (db *DB) rulesetVariants(ctx context.Context, appID int64, campaigns []RulesetCampaign, byID map[int64]int) error {
	rows, err := db.read.QueryContext(ctx, `SELECT v.campaign_id, v.id, v.name, v.traffic_allocation, v.content_view_id, v.is_control
		FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE c.app_id = ? AND c.status = 'active' ORDER BY v.campaign_id, v.id`, appID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var cid int64
		var v RulesetVariant
		var content sql.NullInt64
		if err := rows.Scan(&cid, &v.ID, &v.Name, &v.TrafficAllocation, &content, &v.IsControl); err != nil {
			return err
		}
		if content.Valid {
			v.ContentViewID = &content.Int64
		}
		// A campaign that became active after the campaigns were read is
		// left to the next read: its change moves the generation.
		if i, ok := byID[cid]; ok {
			campaigns[i].Variants = append(campaigns[i].Variants, v)
		}
	}
	return rows.Err()
}

// rulesetContent reads the published blocks that the variants of the
// app's active campaigns show, each once, by id.
func (db *DB) rulesetContent(ctx context.Context, appID int64) ([]*ContentView, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+contentColumns+` FROM content_views
		WHERE app_id = ? AND status = 'published' AND id IN (
			SELECT v.content_view_id FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
			WHERE c.app_id = ? AND c.status = 'active')
		ORDER BY id`, appID, appID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*ContentView{}
	for rows.Next() {
		c, err := scanContent(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, c)
	}
	return list, rows.Err()
}

// encodeRuleset encodes the answer, its version a hash of everything
// after it.
func encodeRuleset(campaigns []RulesetCampaign, contentViews []*ContentView) (*Ruleset, error) {
	cj, err := json.Marshal(campaigns)
	if err != nil {
		return nil, err
	}
	vj, err := json.Marshal(contentViews)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(cj)
	h.Write([]byte{0})
	h.Write(vj)
	sum := h.Sum(nil)
	version := hex.EncodeToString(sum[:12])
	b := make([]byte, 0, len(cj)+len(vj)+80)
	b = append(b, `{"version":"`...)
	b = append(b, version...)
	b = append(b, `","campaigns":`...)
	b = append(b, cj...)
	b = append(b, `,"contentViews":`...)
	b = append(b, vj...)
	b = append(b, '}')
	return &Ruleset{Version: version, Body: b, Campaigns: campaigns}, nil
}
