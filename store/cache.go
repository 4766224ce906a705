package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"service/jsonjs"
)

// liveCampaign is what the SDK hot paths need of a campaign, read from
// SQLite once per change instead of once per request.
type liveCampaign struct {
	id, appID int64
	// keyJSON is the campaign's key as a JSON string, for OpenFeature's
	// answers.
	keyJSON    []byte
	status     string
	start, end int64 // ms; math.MinInt64 / math.MaxInt64 when unset
	audienceID int64 // 0: everyone
	roundRobin bool
	goal       string
	// ns is the namespace range the campaign takes its users from; nil:
	// every user. A range changes only while the campaign is a draft, so
	// an assigned user is always inside it.
	ns *Namespace
	// cupedMS is the CUPED lookback in milliseconds; 0: off.
	cupedMS  int64
	variants []liveVariant // ascending id: the order of the hash ranges
	weights  []float64
	// metrics are the campaign's secondary metrics and guardrails.
	metrics []liveMetric
}

// liveMetric is what the event path needs of a metric to move a user's
// value: a definition frozen while the campaign runs.
type liveMetric struct {
	id       int64
	eventID  string
	typ      string
	property string
	windowMS int64 // 0: until the campaign ends
	cap      float64
	capped   bool
}

// capOf caps a user's value.
func (m *liveMetric) capOf(x float64) float64 {
	if m.capped && x > m.cap {
		return m.cap
	}
	return x
}

// metricTarget is one metric of one active campaign that an event may
// move.
type metricTarget struct {
	lc *liveCampaign
	m  *liveMetric
}

type liveVariant struct {
	id int64
	// answer is the variant response up to `"impressionRecorded":`, encoded
	// once, so a returning user's answer is two appends.
	answer []byte
	// flag is the whole OpenFeature evaluation of a user assigned this
	// variant, encoded once for the same reason.
	flag []byte
}

func (c *liveCampaign) variantIndex(id int64) int {
	for i := range c.variants {
		if c.variants[i].id == id {
			return i
		}
	}
	return -1
}

// running reports whether the campaign counts impressions at now: active
// and inside [startDate, endDate), whether or not the scheduler has ticked.
func (c *liveCampaign) running(now int64) bool {
	return c.status == CampaignActive && now >= c.start && now < c.end
}

// campaignCache holds live campaigns for the generation of the database
// they were read at. Any committed change to campaigns, content or
// audiences bumps the generation, and the next lookup drops everything:
// changes are rare next to reads, and a full flush cannot miss a
// dependency (a content edit changes every campaign showing it).
type campaignCache struct {
	mu     sync.RWMutex
	gen    uint64
	byID   map[int64]*liveCampaign
	active map[int64][]*liveCampaign // app -> active campaigns, by id
	// metricEvents indexes, per app, the metrics of its active campaigns
	// by the event they count, so that an event no metric counts costs
	// one map lookup on the event path. Kept with active, and nil for an
	// app whose active campaigns have no metrics.
	metricEvents map[int64]map[string][]metricTarget
	byKey        map[keyRef]int64 // (app, key) -> campaign id
	// content holds the blocks the SDK's content route served, published
	// or not, so that it answers from memory as the variant route does.
	content map[int64]*ContentView
	// rulesets holds each app's ruleset (ruleset.go) once read.
	rulesets map[int64]*Ruleset
}

func newCampaignCache() *campaignCache {
	return &campaignCache{byID: map[int64]*liveCampaign{}, active: map[int64][]*liveCampaign{},
		metricEvents: map[int64]map[string][]metricTarget{}, byKey: map[keyRef]int64{}, content: map[int64]*ContentView{},
		rulesets: map[int64]*Ruleset{}}
}

func (c *campaignCache) getKey(gen uint64, k keyRef) (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gen != gen {
		return 0, false
	}
	id, ok := c.byKey[k]
	return id, ok
}

func (c *campaignCache) get(gen uint64, id int64) (*liveCampaign, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gen != gen {
		return nil, false
	}
	lc, ok := c.byID[id]
	return lc, ok
}

func (c *campaignCache) getActive(gen uint64, app int64) ([]*liveCampaign, map[string][]metricTarget, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gen != gen {
		return nil, nil, false
	}
	l, ok := c.active[app]
	return l, c.metricEvents[app], ok
}

// put stores what was read at generation gen, unless the cache has moved
// past it: data read before a change must not outlive the change.
func (c *campaignCache) put(gen uint64, fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen < gen {
		c.gen = gen
		c.byID = map[int64]*liveCampaign{}
		c.active = map[int64][]*liveCampaign{}
		c.metricEvents = map[int64]map[string][]metricTarget{}
		c.byKey = map[keyRef]int64{}
		c.content = map[int64]*ContentView{}
		c.rulesets = map[int64]*Ruleset{}
	}
	if c.gen == gen {
		fn()
	}
}

// liveCampaign returns the campaign of the app from memory, reading it once
// per generation. A campaign of another app is not found.
func (db *DB) liveCampaign(ctx context.Context, appID, id int64) (*liveCampaign, error) {
	gen := db.gen.Load()
	if lc, ok := db.cache.get(gen, id); ok {
		if lc.appID != appID {
			return nil, notFound("campaign")
		}
		return lc, nil
	}
	lc, err := db.loadLive(ctx, id)
	if err != nil {
		return nil, err
	}
	db.cache.put(gen, func() {
		db.cache.byID[id] = lc
		// An active campaign missing from the app's list means the list
		// was read before it started, by this process or another whose
		// change has not reached this one yet (SQLite's watcher looks
		// every watchInterval): read the list again, so that the events
		// of a user this process just assigned count for it.
		if l, ok := db.cache.active[lc.appID]; ok && lc.status == CampaignActive &&
			!slices.ContainsFunc(l, func(c *liveCampaign) bool { return c.id == id }) {
			delete(db.cache.active, lc.appID)
			delete(db.cache.metricEvents, lc.appID)
		}
	})
	if lc.appID != appID {
		return nil, notFound("campaign")
	}
	return lc, nil
}

// activeCampaigns returns the app's active campaigns from memory.
func (db *DB) activeCampaigns(ctx context.Context, appID int64) ([]*liveCampaign, error) {
	l, _, err := db.activeWithMetrics(ctx, appID)
	return l, err
}

// activeWithMetrics returns the app's active campaigns from memory, and
// their metrics by the event each counts.
func (db *DB) activeWithMetrics(ctx context.Context, appID int64) ([]*liveCampaign, map[string][]metricTarget, error) {
	gen := db.gen.Load()
	if l, idx, ok := db.cache.getActive(gen, appID); ok {
		return l, idx, nil
	}
	ids, err := scanIDs(db.read.QueryContext(ctx, `SELECT id FROM campaigns WHERE app_id = ? AND status = 'active' ORDER BY id`, appID))
	if err != nil {
		return nil, nil, err
	}
	list := make([]*liveCampaign, 0, len(ids))
	var idx map[string][]metricTarget
	for _, id := range ids {
		lc, err := db.liveCampaign(ctx, appID, id)
		if ErrorCode(err) == ENOTFOUND {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, nil, err
		}
		list = append(list, lc)
		for i := range lc.metrics {
			if idx == nil {
				idx = map[string][]metricTarget{}
			}
			m := &lc.metrics[i]
			idx[m.eventID] = append(idx[m.eventID], metricTarget{lc, m})
		}
	}
	db.cache.put(gen, func() {
		db.cache.active[appID] = list
		if idx != nil {
			db.cache.metricEvents[appID] = idx
		}
	})
	return list, idx, nil
}

// loadLive reads a campaign, its variants and their content blocks, and
// pre-encodes each variant's answer.
func (db *DB) loadLive(ctx context.Context, id int64) (*liveCampaign, error) {
	lc := &liveCampaign{id: id, start: math.MinInt64, end: math.MaxInt64}
	var start, end, audience sql.NullInt64
	var goal, nsID, key sql.NullString
	var nsStart, nsEnd sql.NullFloat64
	var assignment string
	var cupedDays int64
	err := db.read.QueryRowContext(ctx, `SELECT app_id, status, start_at, end_at, audience_id, assignment_type, goal_event_id,
		namespace_id, namespace_start, namespace_end, cuped_lookback_days, key FROM campaigns WHERE id = ?`, id).
		Scan(&lc.appID, &lc.status, &start, &end, &audience, &assignment, &goal, &nsID, &nsStart, &nsEnd, &cupedDays, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("campaign")
	} else if err != nil {
		return nil, err
	}
	if start.Valid {
		lc.start = start.Int64
	}
	if end.Valid {
		lc.end = end.Int64
	}
	lc.audienceID = audience.Int64
	lc.keyJSON = jsonjs.AppendQuote(nil, key.String)
	lc.roundRobin = assignment == AssignRoundRobin
	lc.goal = goal.String
	lc.ns = scanNamespace(nsID, nsStart, nsEnd)
	if goal.Valid {
		// Without a goal there is nothing to count before the assignment.
		lc.cupedMS = cupedDays * msPerDay
	}
	rows, err := db.read.QueryContext(ctx, `
		SELECT v.id, v.name, v.traffic_allocation, c.id, c.name, c.status, c.items
		FROM campaign_variants v LEFT JOIN content_views c ON c.id = v.content_view_id
		WHERE v.campaign_id = ? ORDER BY v.id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var vid int64
		var vname string
		var weight float64
		var cid sql.NullInt64
		var cname, cstatus, items sql.NullString
		if err := rows.Scan(&vid, &vname, &weight, &cid, &cname, &cstatus, &items); err != nil {
			return nil, err
		}
		lc.variants = append(lc.variants, liveVariant{id: vid, answer: variantAnswer(id, vid, vname, cid, cname, cstatus, items),
			flag: flagAnswer(lc, vid, vname, cid)})
		lc.weights = append(lc.weights, weight)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return lc, db.loadLiveMetrics(ctx, lc)
}

// loadLiveMetrics reads the metrics of a campaign.
func (db *DB) loadLiveMetrics(ctx context.Context, lc *liveCampaign) error {
	rows, err := db.read.QueryContext(ctx, `SELECT m.id, m.event_id, m.type, m.property, m.window_hours, m.cap
		FROM campaign_metrics cm JOIN metrics m ON m.id = cm.metric_id WHERE cm.campaign_id = ? ORDER BY m.id`, lc.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var m liveMetric
		var prop sql.NullString
		var window, cap sql.NullFloat64
		if err := rows.Scan(&m.id, &m.eventID, &m.typ, &prop, &window, &cap); err != nil {
			return err
		}
		m.property = prop.String
		if window.Valid {
			m.windowMS = int64(math.Round(window.Float64 * 3600 * 1000))
		}
		m.cap, m.capped = cap.Float64, cap.Valid
		lc.metrics = append(lc.metrics, m)
	}
	return rows.Err()
}

func variantAnswer(campaignID, variantID int64, name string, cid sql.NullInt64, cname, cstatus, items sql.NullString) []byte {
	b := []byte(`{"campaignId":`)
	b = appendInt(b, campaignID)
	b = append(b, `,"variantId":`...)
	b = appendInt(b, variantID)
	b = append(b, `,"variantName":`...)
	b = jsonjs.AppendQuote(b, name)
	if !cid.Valid {
		// The block was deleted under a finished campaign; nothing to show.
		return append(b, `,"contentViewId":null,"contentView":null,"impressionRecorded":`...)
	}
	b = append(b, `,"contentViewId":`...)
	b = appendInt(b, cid.Int64)
	if cstatus.String != ContentPublished {
		// End users see published blocks only, here as on the SDK's content
		// route. A campaign can no longer start with a draft block, but one
		// started before that rule may still run with one.
		return append(b, `,"contentView":null,"impressionRecorded":`...)
	}
	b = append(b, `,"contentView":{"id":`...)
	b = appendInt(b, cid.Int64)
	b = append(b, `,"name":`...)
	b = jsonjs.AppendQuote(b, cname.String)
	b = append(b, `,"status":`...)
	b = jsonjs.AppendQuote(b, cstatus.String)
	b = append(b, `,"items":`...)
	if json.Valid([]byte(items.String)) {
		b = append(b, items.String...)
	} else {
		b = append(b, `[]`...)
	}
	return append(b, `},"impressionRecorded":`...)
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// userCache is a bounded, sharded map from (scope id, kind, user) to an id:
// campaign assignments (scope = campaign, value = variant id) and known
// users (scope = app). When a shard fills it is cleared: a miss costs one
// indexed read, so forgetting is cheap, and memory stays bounded.
//
// Its memory holds no pointers, so the garbage collector never scans it.
// Full, the three caches hold 130,000 users; as a map keyed by strings
// they were as many heap objects, which every collection marked again,
// and collections come often on the SDK routes (every few megabytes
// allocated). A shard is instead a map from the key's 64-bit hash to an
// entry, and the entries' user ids sit back to back in one byte slice; a
// lookup compares the whole key, so two keys with the same hash are never
// confused: the later one takes the slot and the earlier is a miss.
//
// A shard's memory grows as users come (and stays when it starts over),
// rather than being set aside up front: the four caches would take 6 MiB
// from the start, their few users spread thinly over maps sized for
// tens of thousands, which costs a lookup more misses of the CPU's
// caches.
//
// An erasure empties it (see forgetUsers): each shard is tagged with the
// epoch it was filled in, and an entry of an older epoch is a miss, so
// that no process answers an erased user from memory.
type userCache struct {
	seed   maphash.Seed
	shards [64]userShard
	limit  int
	// epoch is the database's userEpoch.
	epoch *atomic.Uint64
}

type userShard struct {
	mu    sync.RWMutex
	slots map[uint64]uint32 // key hash -> index in entries
	ents  []userEntry
	ids   []byte // the entries' user ids, back to back
	epoch uint64 // the epoch its entries were put in
}

type userEntry struct {
	scope, val int64
	// at is an assignment's assigned_at when known, else 0: metric events
	// need it, the variant routes do not, and an assignment never moves.
	at   int64
	off  uint32 // the user id is ids[off : off+n]
	n    uint32
	kind byte
}

type userKey struct {
	scope int64
	kind  byte // 'u' userId, 's' sessionId
	user  string
}

func newUserCache(perShard int, epoch *atomic.Uint64) *userCache {
	c := &userCache{seed: maphash.MakeSeed(), limit: perShard, epoch: epoch}
	for i := range c.shards {
		c.shards[i].slots = make(map[uint64]uint32)
	}
	return c
}

// shard returns k's hash and the shard that holds it.
func (c *userCache) shard(k userKey) (uint64, *userShard) {
	h := maphash.String(c.seed, k.user) ^ (uint64(k.scope)<<8|uint64(k.kind))*0x9E3779B97F4A7C15
	return h, &c.shards[h%uint64(len(c.shards))]
}

// find returns the index of k's entry in s, or -1.
func (s *userShard) find(h uint64, k userKey) int {
	i, ok := s.slots[h]
	if !ok {
		return -1
	}
	e := &s.ents[i]
	if e.scope != k.scope || e.kind != k.kind || string(s.ids[e.off:e.off+e.n]) != k.user {
		return -1
	}
	return int(i)
}

func (c *userCache) get(k userKey) (int64, bool) {
	v, _, ok := c.getAt(k)
	return v, ok
}

// getAt is get with the entry's time (0 when not known).
func (c *userCache) getAt(k userKey) (v, at int64, ok bool) {
	h, s := c.shard(k)
	cur := c.epoch.Load()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.epoch != cur {
		return 0, 0, false // filled before an erasure
	}
	if i := s.find(h, k); i >= 0 {
		return s.ents[i].val, s.ents[i].at, true
	}
	return 0, 0, false
}

// put stores v for k, learnt from the database at epoch (the cache's
// epoch when the caller began: see userEpoch). What was learnt before an
// erasure that memory already knows of is not kept.
func (c *userCache) put(k userKey, v int64, epoch uint64) {
	c.putAt(k, v, 0, epoch)
}

// putAt is put with a time, at (0 when not known): a known time stays
// while the value it goes with does.
func (c *userCache) putAt(k userKey, v, at int64, epoch uint64) {
	h, s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case epoch < s.epoch:
		return
	case epoch > s.epoch:
		clear(s.slots)
		s.ents, s.ids = s.ents[:0], s.ids[:0]
		s.epoch = epoch
	}
	if i := s.find(h, k); i >= 0 {
		e := &s.ents[i]
		if at != 0 || e.val != v {
			e.at = at
		}
		e.val = v
		return
	}
	// A full shard starts over, and so does one whose ids outgrow 64 bytes
	// an entry on average: ids may be 256 bytes long.
	if len(s.ents) >= c.limit || len(s.ids)+len(k.user) > c.limit*64 {
		clear(s.slots)
		s.ents, s.ids = s.ents[:0], s.ids[:0]
	}
	s.slots[h] = uint32(len(s.ents))
	s.ents = append(s.ents, userEntry{scope: k.scope, val: v, at: at, off: uint32(len(s.ids)), n: uint32(len(k.user)), kind: k.kind})
	s.ids = append(s.ids, k.user...)
}

// SDKContent returns a block of the app for the SDK's content route, from
// memory once read at this generation: every change to content moves the
// generation, and the route then answers without the database, during an
// outage too. The answer is shared: callers only encode it.
func (db *DB) SDKContent(ctx context.Context, appID, id int64) (*ContentView, error) {
	gen := db.gen.Load()
	db.cache.mu.RLock()
	c, ok := db.cache.content[id]
	ok = ok && db.cache.gen == gen
	db.cache.mu.RUnlock()
	if !ok {
		var err error
		if c, err = db.FindContentByID(ctx, appID, id); err != nil {
			return nil, err
		}
		db.cache.put(gen, func() { db.cache.content[id] = c })
	}
	if c.AppID != appID {
		return nil, notFound("content view")
	}
	return c, nil
}
