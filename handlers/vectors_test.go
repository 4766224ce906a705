package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"service/assign"
)

// vectorsFile is the one truth about assignment that the server and the
// SDK's local evaluator both run: campaigns in the ruleset's entry shape,
// and users with the variant (or the reason for none) that the server's
// variant route answers them.
const vectorsFile = "../testdata/assignment_vectors.json"

// vectorCampaign is a campaign as the ruleset lists it.
type vectorCampaign struct {
	ID             int64           `json:"id"`
	Key            string          `json:"key"`
	Evaluation     string          `json:"evaluation"`
	AssignmentType string          `json:"assignmentType"`
	Namespace      any             `json:"namespace"`
	Audience       json.RawMessage `json:"audience"`
	Variants       []vectorVariant `json:"variants"`
}

type vectorVariant struct {
	ID                int64   `json:"id"`
	Name              string  `json:"name"`
	TrafficAllocation float64 `json:"trafficAllocation"`
	ContentViewID     int64   `json:"contentViewId"`
	IsControl         bool    `json:"isControl"`
}

// vectorCase keeps the user's fields as raw JSON: a lone surrogate such as
// "\ud800" is a JavaScript string the SDK can hold, which Go decodes to
// U+FFFD, as the server does with what the SDK sends.
type vectorCase struct {
	UserID     json.RawMessage `json:"userId,omitempty"`
	SessionID  json.RawMessage `json:"sessionId,omitempty"`
	Attributes json.RawMessage `json:"attributes,omitempty"`
	CampaignID int64           `json:"campaignId"`
	Expected   vectorExpected  `json:"expected"`
}

type vectorExpected struct {
	VariantID *int64 `json:"variantId,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

type vectorsDoc struct {
	About     string           `json:"about"`
	Campaigns []vectorCampaign `json:"campaigns"`
	Cases     []vectorCase     `json:"cases"`
}

// vectorSpec is a campaign the vectors are made on.
type vectorSpec struct {
	key       string
	weights   []float64 // nil: the default equal split of n variants
	n         int
	namespace map[string]any
	audience  string // a definition, or ""
	// fields the cases vary, for an audience; values come from
	// vectorValues, or, for more than one field, at random from it.
	fields []string
}

// vectorSpecs are the campaigns, created in this order on a fresh
// database, so their ids (and their variants') are always the same.
func vectorSpecs() []vectorSpec {
	ns := func(id string, a, b float64) map[string]any { return map[string]any{"id": id, "range": []any{a, b}} }
	rule := func(field, op, value string) string {
		if value == "" {
			return fmt.Sprintf(`{"rules":[{"field":%q,"operator":%q}]}`, field, op)
		}
		return fmt.Sprintf(`{"logic":"AND","rules":[{"ruleType":"attribute","field":%q,"operator":%q,"value":%s}]}`, field, op, value)
	}
	one := func(key, field, op, value string) vectorSpec {
		return vectorSpec{key: key, n: 2, audience: rule(field, op, value), fields: []string{field}}
	}
	bigIn := `["c00","c01","c02","c03","c04","c05","c06","c07","c08","c09","c10","c11","c12","c13","c14","c15","c16",` +
		`0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,-1]`
	return []vectorSpec{
		{key: "split", n: 2},
		{key: "thirds", weights: []float64{33.33, 33.33, 33.34}},
		{key: "zero-weights", weights: []float64{0, 37.5, 0, 62.5}},
		{key: "fine-weights", weights: []float64{12.34, 0.01, 50, 0, 37.65}},
		{key: "middle-only", weights: []float64{0, 100, 0}},
		{key: "ns-alpha-low", n: 2, namespace: ns("alpha", 0, 0.25)},
		{key: "ns-alpha-high", weights: []float64{70, 30}, namespace: ns("alpha", 0.25, 0.5)},
		{key: "ns-beta-top", n: 2, namespace: ns("beta", 0.999, 1)},
		{key: "ns-delta-bottom", n: 3, namespace: ns("delta", 0, 0.001)},
		{key: "ns-gamma-targeted", n: 2, namespace: ns("gamma", 0.3, 0.7), audience: rule("country", "equals", `"DE"`), fields: []string{"country"}},
		one("eq-string", "country", "equals", `"DE"`),
		one("eq-number", "age", "equals", `30`),
		one("eq-bool", "vip", "equals", `true`),
		one("eq-surrogate", "sym", "equals", `"\ud800"`),
		one("ne-string", "country", "not_equals", `"DE"`),
		one("ne-number", "age", "not_equals", `30`),
		one("contains", "email", "contains", `"@example"`),
		one("contains-empty", "email", "contains", `""`),
		one("not-contains", "email", "not_contains", `"test"`),
		one("starts-with", "plan", "starts_with", `"pro"`),
		one("ends-with", "email", "ends_with", `".de"`),
		one("gt-number", "age", "greater_than", `18`),
		one("gte-number", "age", "greater_than_or_equal", `21.5`),
		one("lt-number", "score", "less_than", `-1`),
		one("lte-number", "score", "less_than_or_equal", `0`),
		one("gt-string", "signup", "greater_than", `"2024-01-01"`),
		one("lt-string", "name", "less_than", `"m"`),
		one("gte-string-unicode", "word", "greater_than_or_equal", `"\uff21"`),
		one("lte-string-unicode", "word", "less_than_or_equal", `"\ue000"`),
		one("in-mixed", "tier", "in", `["gold",3,true,"silver",0,"\udc00"]`),
		one("in-large", "code", "in", bigIn),
		one("not-in", "tier", "not_in", `["gold",1,false]`),
		one("not-in-large", "code", "not_in", bigIn),
		one("exists", "coupon", "exists", ""),
		one("not-exists", "coupon", "not_exists", ""),
		one("unicode-field", "länd🌍", "equals", `"ß"`),
		{key: "and-five", n: 3, fields: []string{"country", "age", "plan", "email", "vip"},
			audience: `{"logic":"AND","rules":[` +
				`{"field":"country","operator":"in","value":["DE","de","AT","ß"]},` +
				`{"field":"age","operator":"greater_than_or_equal","value":18},` +
				`{"field":"plan","operator":"starts_with","value":"pr"},` +
				`{"field":"email","operator":"contains","value":"@"},` +
				`{"field":"vip","operator":"not_equals","value":false}]}`},
		{key: "or-three", weights: []float64{25, 75}, fields: []string{"country", "age", "coupon"},
			audience: `{"logic":"OR","rules":[` +
				`{"field":"country","operator":"equals","value":"DE"},` +
				`{"field":"age","operator":"less_than","value":18},` +
				`{"field":"coupon","operator":"exists"}]}`},
		{key: "no-logic", n: 2, fields: []string{"plan", "score"},
			audience: `{"rules":[{"field":"plan","operator":"not_in","value":["free"]},` +
				`{"field":"score","operator":"greater_than","value":-1}]}`},
	}
}

// vectorValues are the attribute values the audience cases try: every
// JSON type, near misses, numbers that are strings and unicode on both
// sides of the UTF-16 and code point orders. "" stands for a missing
// attribute.
var vectorValues = []string{
	"", `null`, `"DE"`, `"de"`, `""`, `"D"`, `"DE "`, `"AT"`, `"ß"`, `"ss"`,
	`30`, `30.0`, `"30"`, `3e1`, `-0`, `0`, `-1.5`, `-1`, `1e21`, `18`, `18.000001`, `17.999`, `21.5`, `21.49`,
	`9007199254740993`, `1.7976931348623157e308`, `5e-324`,
	`true`, `false`, `"true"`, `"false"`, `[]`, `["DE"]`, `[30]`, `{"a":1}`, `{}`,
	`"pro"`, `"professional"`, `"pr"`, `"PRO"`, `"free"`,
	`"a@example.com"`, `"test@example.de"`, `"x.de"`, `".de"`, `"@"`,
	`"😀"`, `"é"`, `"e\u0301"`, `"ｚ"`, `"\uff21"`, `"\uff20"`, `"\ufffd"`, `"\ud800"`, `"x\udfff"`, `"\udc00"`, `"\ue000"`, `"\udbff\udfff"`,
	`"m"`, `"l"`, `"mm"`, `"M"`, `"𝔘"`,
	`"2024-01-01"`, `"2024-01-01T00:00:00Z"`, `"2023-12-31"`,
	`"gold"`, `"silver"`, `3`, `3.0`, `"3"`, `1`, `"1"`, `"c07"`, `7`, `16`, `-1e0`,
}

// vectorKeys are user keys that stress the hash: non-ASCII, astral-plane
// characters (two UTF-16 units each), combining marks, and lone or
// misordered surrogates, written as JSON string literals.
var vectorKeys = []string{
	`"ü"`, `"日本語"`, `"😀"`, `"👩‍👩‍👧‍👦"`, `"e\u0301"`, `"é"`, `"\ufeffbom"`, `"tab\tkey"`, `"line\u2028sep"`,
	`"𝔘𝔫𝔦𝔠𝔬𝔡𝔢"`, `"\udbff\udfff"`, `"\uffff"`, `"\ufffd"`, `"\ud800"`, `"\udfff"`, `"x\ud83d"`, `"\ude00x"`,
	`"\udc00\ud800"`, `"\ud83d\ud83d\ude00"`, `" "`, `"` + strings.Repeat("k", 240) + `"`, `"` + strings.Repeat("ä", 240) + `"`,
	`"Ω≈ç√∫"`, `"٣٤٥"`, `"\u0001"`, `"quote\"back\\slash"`,
}

// vectorGen builds the cases; its random source is fixed, so -update
// rewrites the same file from the same code.
type vectorGen struct {
	rng   *rand.Rand
	cases []vectorCase
	seq   int
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// user names a new user key for a case: every case that carries
// attributes has its own user, so no profile merges into another case's.
func (g *vectorGen) user(prefix string) json.RawMessage {
	g.seq++
	return jsonString(fmt.Sprintf("%s-%d", prefix, g.seq))
}

func (g *vectorGen) add(c vectorCase) { g.cases = append(g.cases, c) }

// withSuffix appends -n inside a JSON string literal.
func withSuffix(lit string, n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`%s-%d"`, lit[:len(lit)-1], n))
}

// randomKey draws a key of ASCII, BMP and astral characters.
func (g *vectorGen) randomKey() json.RawMessage {
	pool := []string{"a", "Z", "0", "-", "_", "@", ".", "ä", "ß", "中", "€", "😀", "𝔘", `\ud800`, `\udfff`, "\u0301", "\uffff"}
	var b strings.Builder
	b.WriteByte('"')
	for range 1 + g.rng.IntN(12) {
		b.WriteString(pool[g.rng.IntN(len(pool))])
	}
	fmt.Fprintf(&b, "~%d\"", g.rng.IntN(1_000_000))
	return json.RawMessage(b.String())
}

func attrs(pairs ...string) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue // a missing attribute
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(jsonString(pairs[i]))
		b.WriteByte(':')
		b.WriteString(pairs[i+1])
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// nsEdgeKeys finds keys whose namespace hash sits exactly on, or one
// step inside, the edges of [start, end).
func nsEdgeKeys(id string, start, end float64) []json.RawMessage {
	targets := map[int]int{}
	for _, n := range []int{int(start*1000 + 0.5), int(end*1000+0.5) - 1, int(end*1000 + 0.5), int(start*1000+0.5) - 1} {
		if n >= 0 && n < 1000 {
			targets[n] = 0
		}
	}
	var keys []json.RawMessage
	for i := 0; len(keys) < 3*len(targets) && i < 1_000_000; i++ {
		k := fmt.Sprintf("edge-%s-ü-%d", id, i)
		n := assign.HashV1("__"+id, k)
		if c, ok := targets[n]; ok && c < 3 {
			targets[n]++
			keys = append(keys, jsonString(k))
		}
	}
	return keys
}

func (g *vectorGen) build(specs []vectorSpec, ids []int64) {
	for i, s := range specs {
		id := ids[i]
		if s.audience == "" {
			var ns []json.RawMessage
			if s.namespace != nil {
				r := s.namespace["range"].([]any)
				ns = nsEdgeKeys(s.namespace["id"].(string), r[0].(float64), r[1].(float64))
			}
			for _, k := range ns {
				g.add(vectorCase{UserID: k, CampaignID: id})
				g.add(vectorCase{SessionID: k, CampaignID: id})
			}
			for j, k := range vectorKeys {
				g.add(vectorCase{UserID: json.RawMessage(k), CampaignID: id})
				g.add(vectorCase{SessionID: withSuffix(k, j), CampaignID: id})
			}
			for j := range 330 {
				c := vectorCase{CampaignID: id}
				switch j % 4 {
				case 0:
					c.UserID = g.randomKey()
				case 1:
					c.SessionID = g.randomKey()
				case 2:
					c.UserID = jsonString(fmt.Sprintf("user-%d", j))
					c.SessionID = g.randomKey() // userId wins
				default:
					c.UserID = json.RawMessage(`""`)
					c.SessionID = jsonString(fmt.Sprintf("session-%d", j))
				}
				g.add(c)
			}
			continue
		}
		// Sessions are not assigned by a targeted campaign, whatever
		// their attributes; a namespace is checked first.
		for j := range 12 {
			g.add(vectorCase{SessionID: withSuffix(`"targeted-session"`, g.rng.IntN(1_000_000)*100+j), Attributes: attrs("country", `"DE"`, "coupon", `"x"`), CampaignID: id})
		}
		if len(s.fields) == 1 {
			for _, v := range vectorValues {
				g.add(vectorCase{UserID: g.user("u"), Attributes: attrs(s.fields[0], v), CampaignID: id})
			}
			// Unicode user keys through an audience that lets them in or not.
			for j := range 4 {
				k := vectorKeys[g.rng.IntN(len(vectorKeys))]
				v := vectorValues[g.rng.IntN(len(vectorValues))]
				g.add(vectorCase{UserID: withSuffix(k, g.rng.IntN(1_000_000)*10+j), Attributes: attrs(s.fields[0], v, "noise", `"x"`), CampaignID: id})
			}
			continue
		}
		// Several fields: the values they match most often, mixed with
		// every other value at random.
		likely := map[string][]string{
			"country": {`"DE"`, `"de"`, `"ß"`, `"AT"`}, "age": {`30`, `18`, `17.999`, `21.5`},
			"plan": {`"pro"`, `"pr"`, `"professional"`, `"free"`}, "email": {`"a@example.com"`, `"@"`},
			"vip": {`true`, `false`}, "coupon": {`"x"`, `null`}, "score": {`0`, `-1`, `-0`, `5`},
		}
		n := 150
		if s.namespace != nil {
			n = 120
		}
		for range n {
			var pairs []string
			for _, f := range s.fields {
				v := vectorValues[g.rng.IntN(len(vectorValues))]
				if l := likely[f]; g.rng.IntN(3) > 0 {
					v = l[g.rng.IntN(len(l))]
				}
				pairs = append(pairs, f, v)
			}
			g.add(vectorCase{UserID: g.user("m"), Attributes: attrs(pairs...), CampaignID: id})
		}
	}
}

// vectorCampaigns creates the specs' campaigns, active, through the admin
// API, and answers them as the ruleset lists them.
func vectorCampaigns(e *testEnv, specs []vectorSpec) []vectorCampaign {
	e.t.Helper()
	blocks := campaignBlocks(e, 5)
	out := make([]vectorCampaign, len(specs))
	for i, s := range specs {
		n := s.n
		if s.weights != nil {
			n = len(s.weights)
		}
		vs := make([]any, n)
		for j := range vs {
			v := map[string]any{"contentViewId": blocks[j]}
			if s.weights != nil {
				v["trafficAllocation"] = s.weights[j]
			}
			vs[j] = v
		}
		body := map[string]any{"name": "Vectors " + s.key, "key": s.key, "endDate": campaignFarEnd, "variants": vs}
		var audience json.RawMessage
		if s.audience != "" {
			body["audienceId"] = num(audienceCreate(e, "vectors "+s.key, s.audience), "id")
			audience = json.RawMessage(s.audience)
		}
		if s.namespace != nil {
			body["namespace"] = s.namespace
		}
		c := campaignCreate(e, body)
		id := num(c, "id")
		campaignSetStatus(e, id, "active")
		c = campaignGet(e, id)
		vc := vectorCampaign{ID: id, Key: c["key"].(string), Evaluation: "local", AssignmentType: c["assignmentType"].(string),
			Namespace: c["namespace"], Audience: audience}
		if vc.Audience == nil {
			vc.Audience = json.RawMessage("null")
		}
		for _, v := range c["variants"].([]any) {
			m := v.(map[string]any)
			vc.Variants = append(vc.Variants, vectorVariant{ID: num(m, "id"), Name: m["name"].(string),
				TrafficAllocation: m["trafficAllocation"].(float64), ContentViewID: num(m, "contentViewId"), IsControl: m["isControl"] == true})
		}
		out[i] = vc
	}
	return out
}

// vectorAsk asks the real variant route for every case, a few at a time
// so that group commit batches the assignments, and answers what it says.
func vectorAsk(t *testing.T, e *testEnv, cases []vectorCase) []vectorExpected {
	out := make([]vectorExpected, len(cases))
	errs := make([]string, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := cases[i]
				var body bytes.Buffer
				body.WriteByte('{')
				sep := ""
				for _, f := range []struct {
					name string
					raw  json.RawMessage
				}{{"userId", c.UserID}, {"sessionId", c.SessionID}, {"attributes", c.Attributes}} {
					if f.raw != nil {
						fmt.Fprintf(&body, `%s"%s":%s`, sep, f.name, f.raw)
						sep = ","
					}
				}
				body.WriteByte('}')
				req := httptest.NewRequest("POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, c.CampaignID), &body)
				req.Header.Set("Authorization", "Bearer "+e.Cli)
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				e.Srv.ServeHTTP(rec, req)
				var a campaignAnswer
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &a) != nil {
					errs[i] = fmt.Sprintf("case %d: %d %s", i, rec.Code, rec.Body.String())
					continue
				}
				if a.VariantID != nil {
					out[i].VariantID = a.VariantID
				} else if a.Reason != nil {
					out[i].Reason = *a.Reason
				}
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, msg := range errs {
		if msg != "" {
			t.Fatal(msg)
		}
	}
	return out
}

func writeVectors(doc *vectorsDoc) error {
	var b bytes.Buffer
	head, err := json.MarshalIndent(struct {
		About     string           `json:"about"`
		Campaigns []vectorCampaign `json:"campaigns"`
	}{doc.About, doc.Campaigns}, "", "  ")
	if err != nil {
		return err
	}
	// One case a line: the file stays readable and its diffs small.
	b.Write(head[:len(head)-2])
	b.WriteString(",\n  \"cases\": [\n")
	for i, c := range doc.Cases {
		line, err := json.Marshal(c)
		if err != nil {
			return err
		}
		b.WriteString("    ")
		b.Write(line)
		if i < len(doc.Cases)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]\n}\n")
	return os.WriteFile(vectorsFile, b.Bytes(), 0o644)
}

// TestAssignmentVectors runs every case of testdata/assignment_vectors.json
// through the real variant route on a fresh database and wants the answer
// the file holds; the SDK's tests run the same file through its local
// evaluator, so the two cannot drift apart. With -update it rewrites the
// file from the server's answers.
func TestAssignmentVectors(t *testing.T) {
	e := newEnv(t)
	specs := vectorSpecs()
	campaigns := vectorCampaigns(e, specs)
	doc := &vectorsDoc{
		About: "Assignment vectors: campaigns as the ruleset lists them, and users with the variant the server's variant route assigns them " +
			"(or the reason it assigns none). User keys and attribute values are JavaScript strings: a lone surrogate such as \\ud800 reaches " +
			"the server as U+FFFD. Each case's user is new to the campaign; an audience sees the case's attributes only. " +
			"Rewritten with `go test ./handlers -run TestAssignmentVectors -update`; the Go tests and the SDK's tests both run it.",
		Campaigns: campaigns,
	}
	if *update {
		ids := make([]int64, len(campaigns))
		for i, c := range campaigns {
			ids[i] = c.ID
		}
		g := &vectorGen{rng: rand.New(rand.NewPCG(47, 2026))}
		g.build(specs, ids)
		got := vectorAsk(t, e, g.cases)
		for i := range g.cases {
			g.cases[i].Expected = got[i]
		}
		doc.Cases = g.cases
		if err := writeVectors(doc); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var file vectorsDoc
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	// The cases name campaigns and variants by id: a fresh database must
	// give the file's ids, or every case would ask the wrong campaign.
	var want, got any
	a, _ := json.Marshal(file.Campaigns)
	b, _ := json.Marshal(campaigns)
	_ = json.Unmarshal(a, &want)
	_ = json.Unmarshal(b, &got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the campaigns made on a fresh database differ from the file's:\n got %s\nwant %s", b, a)
	}
	// And they are what the ruleset lists, so an evaluator fed the
	// ruleset evaluates what the file's cases evaluate.
	rs := e.must(http.StatusOK, "GET", pathf("/v1/apps-external/%d/ruleset", e.App.ID), e.Cli, nil)
	var listed any
	l, _ := json.Marshal(rs["campaigns"])
	_ = json.Unmarshal(l, &listed)
	if !reflect.DeepEqual(listed, want) {
		t.Fatalf("the ruleset lists other campaigns than the file:\n got %s\nwant %s", l, a)
	}
	if len(file.Cases) < 5000 {
		t.Fatalf("%d cases, want at least 5,000", len(file.Cases))
	}
	answers := vectorAsk(t, e, file.Cases)
	seen := map[string]int{}
	bad := 0
	for i, c := range file.Cases {
		switch {
		case c.Expected.VariantID != nil:
			seen["variant"]++
		default:
			seen[c.Expected.Reason]++
		}
		if !reflect.DeepEqual(answers[i], c.Expected) {
			if bad++; bad <= 20 {
				t.Errorf("case %d (%s): the server answers %s", i, mustJSON(c), mustJSON(answers[i]))
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d cases differ", bad, len(file.Cases))
	}
	// The file must exercise every outcome, or a change that lost one
	// would pass unseen.
	for _, k := range []string{"variant", "not_in_audience", "not_in_namespace"} {
		if seen[k] < 100 {
			t.Errorf("%d cases answer %s, want at least 100", seen[k], k)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
