package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Payload is an encoded answer with its ETag.
type Payload struct {
	ETag string
	Body []byte
}

// gbRule is one experiment rule of GrowthBook's feature payload.
type gbRule struct {
	Key           string         `json:"key"`
	Variations    []string       `json:"variations"`
	Weights       []float64      `json:"weights"`
	Coverage      float64        `json:"coverage"`
	HashAttribute string         `json:"hashAttribute"`
	HashVersion   int            `json:"hashVersion"`
	Seed          string         `json:"seed"`
	Namespace     []any          `json:"namespace,omitempty"`
	Condition     map[string]any `json:"condition,omitempty"`
	Meta          []gbMeta       `json:"meta"`
	// Ranges are the variants' hash ranges exactly as assign.Pick draws
	// them, boundaries rounded to the bucket (1/10000), with the tail left
	// by allocations summing under 100 going to the last variant that has
	// an allocation. GrowthBook's SDKs use ranges in place of the ranges
	// they would add up from weights in floating point, which can put a
	// boundary bucket on the other side (0.3333+0.3333 is not 0.6666).
	Ranges [][2]float64 `json:"ranges"`
}

type gbMeta struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

type gbFeature struct {
	DefaultValue any      `json:"defaultValue"`
	Rules        []gbRule `json:"rules"`
}

// GrowthBook returns the app's ruleset as GrowthBook's SDKs take their
// payload: one feature per campaign evaluated locally, keyed by the
// campaign's key, whose one experiment rule assigns as the server does.
// Campaigns evaluated remotely, and those whose audience GrowthBook's
// conditions cannot express exactly (rules.GrowthBookCondition), are left
// out. It is encoded once per ruleset.
func (rs *Ruleset) GrowthBook() *Payload {
	rs.gbOnce.Do(func() {
		features := map[string]gbFeature{}
		for i := range rs.Campaigns {
			c := &rs.Campaigns[i]
			if r, ok := growthBookRule(c); ok {
				features[c.Key] = gbFeature{Rules: []gbRule{r}}
			}
		}
		b := []byte(`{"features":`)
		fj, err := json.Marshal(features)
		if err != nil {
			fj = []byte("{}") // nothing above fails to encode
		}
		b = append(b, fj...)
		b = append(b, `,"dateUpdated":`...)
		b = appendDateUpdated(b, rs.updated, fj)
		b = append(b, '}')
		sum := sha256.Sum256(b)
		rs.gb = &Payload{ETag: `"` + hex.EncodeToString(sum[:12]) + `"`, Body: b}
	})
	return rs.gb
}

// appendDateUpdated appends the payload's dateUpdated: the latest change
// (updated, ms), to the microsecond. GrowthBook's SDKs take dateUpdated
// for the payload's version, and keep the payload they hold when a new one
// has the same: two changes within one millisecond would name two payloads
// alike, so the microseconds come from the features (a hash, the same on
// every replica). Two payloads of one millisecond are then named alike one
// time in 1,000, and six digits of fraction are as many as every SDK's
// date parser reads.
func appendDateUpdated(b []byte, updated int64, features []byte) []byte {
	sum := sha256.Sum256(features)
	us := int64(binary.BigEndian.Uint64(sum[:8]) % 1000)
	t := time.UnixMicro(updated*1000 + us).UTC()
	return t.AppendFormat(b, `"2006-01-02T15:04:05.000000Z"`)
}

func growthBookRule(c *RulesetCampaign) (gbRule, bool) {
	if c.Evaluation != EvaluationLocal || c.Key == "" || len(c.Variants) < 2 {
		return gbRule{}, false
	}
	r := gbRule{Key: c.Key, Coverage: 1, HashAttribute: "id", HashVersion: 2,
		Seed: strconv.FormatInt(c.ID, 10) + ":"}
	if c.def != nil {
		cond, ok := c.def.GrowthBookCondition()
		if !ok {
			return gbRule{}, false
		}
		// The server assigns a targeted campaign's users by their profile,
		// which a visitor known only by a session does not have.
		r.Condition = map[string]any{"$and": []any{
			map[string]any{"userId": map[string]any{"$type": "string", "$ne": ""}}, cond}}
	}
	if c.Namespace != nil {
		r.Namespace = []any{c.Namespace.ID, c.Namespace.Range[0], c.Namespace.Range[1]}
	}
	weights := make([]float64, len(c.Variants))
	for i, v := range c.Variants {
		r.Variations = append(r.Variations, v.Name)
		// Divided after rounding, so that 33.34 gives 0.3334 and not
		// 0.33340000000000003.
		r.Weights = append(r.Weights, math.Round(v.TrafficAllocation*1e6)/1e8)
		r.Meta = append(r.Meta, gbMeta{Key: strconv.FormatInt(v.ID, 10), Name: v.Name})
		weights[i] = v.TrafficAllocation
	}
	r.Ranges = pickRanges(weights)
	return r, true
}

// pickRanges returns, per variant, the n = bucket/10000 in [start, end)
// that assign.Pick gives it.
func pickRanges(weights []float64) [][2]float64 {
	ranges := make([][2]float64, len(weights))
	last := -1
	var sum float64
	lo := 0.0
	for i, w := range weights {
		if !(w > 0) {
			ranges[i] = [2]float64{lo / 10000, lo / 10000}
			continue
		}
		last = i
		sum += w
		hi := math.Min(math.Round(sum*100), 10000)
		ranges[i] = [2]float64{lo / 10000, hi / 10000}
		lo = hi
	}
	switch {
	case last < 0:
		// No allocation at all: the server gives everyone the first.
		ranges[0] = [2]float64{0, 1}
	default:
		ranges[last][1] = 1
		// Variants after the last with an allocation own nothing.
		for i := last + 1; i < len(ranges); i++ {
			ranges[i] = [2]float64{1, 1}
		}
	}
	return ranges
}
