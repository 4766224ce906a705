package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// Plans and their requests-per-minute limits.
var planLimits = map[string]int{"free": 60, "starter": 300, "pro": 1000, "enterprise": 10000}

// PlanLimit is the requests-per-minute limit a plan gives; 0 for an
// unknown plan.
func PlanLimit(plan string) int { return planLimits[plan] }

// Plans are the plans, from the smallest limit to the largest.
var Plans = []string{"free", "starter", "pro", "enterprise"}

// DefaultPlan is the plan of apps created without one, until serve's
// --default-plan says otherwise.
const DefaultPlan = "free"

// CheckPlan refuses a name that is not a plan's.
func CheckPlan(plan string) error {
	if _, ok := planLimits[plan]; !ok {
		return Errorf(EINVALID, "plan must be one of free, starter, pro, enterprise")
	}
	return nil
}

// SetDefaultPlan makes plan the one apps created without a plan get, from
// any process on the database: serve records its --default-plan here at
// start, so that the command line's apps create follows it too.
func (db *DB) SetDefaultPlan(ctx context.Context, plan string) error {
	if err := CheckPlan(plan); err != nil {
		return err
	}
	return db.withTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(`INSERT INTO instance_settings (id, default_plan) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET default_plan = excluded.default_plan
			WHERE instance_settings.default_plan <> excluded.default_plan`, plan)
		return err
	})
}

// FindDefaultPlan returns the plan apps created without one get.
func (db *DB) FindDefaultPlan(ctx context.Context) (string, error) {
	return defaultPlan(db.read.QueryRowContext(ctx, findDefaultPlan))
}

const findDefaultPlan = `SELECT default_plan FROM instance_settings WHERE id = 1`

// defaultPlan reads findDefaultPlan's row: no row is the free plan.
func defaultPlan(row *sql.Row) (string, error) {
	var plan string
	err := row.Scan(&plan)
	if errors.Is(err, sql.ErrNoRows) {
		return DefaultPlan, nil
	}
	return plan, err
}

// App is a tenant: every resource belongs to exactly one.
type App struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Plan      string `json:"plan"`
	RateLimit int    `json:"rateLimit"`
}

// Roles a key can hold.
const (
	RoleAdmin  = "admin"
	RoleRead   = "read"
	RoleClient = "client"
)

// Key is an API key as the database knows it: never the plaintext.
type Key struct {
	ID    int64  `json:"id"`
	AppID int64  `json:"appId"`
	Role  string `json:"role"`
	// Name is omitted when empty, as keys create prints it.
	Name      string `json:"name,omitempty"`
	Prefix    string `json:"prefix"`
	CreatedAt Time   `json:"createdAt"`
	RevokedAt *Time  `json:"revokedAt"`

	// App limits travel with the key so a request needs one lookup.
	RateLimit int `json:"-"`
}

// CreateApp creates an app. An empty plan takes the instance's default
// (see SetDefaultPlan); rateLimit 0 takes the plan's limit.
func (db *DB) CreateApp(ctx context.Context, name, plan string, rateLimit int) (*App, error) {
	if plan != "" {
		if err := CheckPlan(plan); err != nil {
			return nil, err
		}
	}
	if name == "" {
		return nil, Errorf(EINVALID, "name is required")
	}
	if rateLimit < 0 {
		return nil, Errorf(EINVALID, "rate limit must be positive")
	}
	a := &App{Name: name, Plan: plan, RateLimit: rateLimit}
	err := db.withTx(ctx, func(tx *Tx) error {
		if a.Plan == "" {
			var err error
			if a.Plan, err = defaultPlan(tx.queryRow(findDefaultPlan)); err != nil {
				return err
			}
		}
		if a.RateLimit == 0 {
			a.RateLimit = planLimits[a.Plan]
		}
		plan, rateLimit := a.Plan, a.RateLimit
		newID, err := tx.insertID(`INSERT INTO apps (name, plan, rate_limit, created_at) VALUES (?, ?, ?, ?)`,
			name, plan, rateLimit, ms(tx.now))
		if err != nil {
			return err
		}
		a.ID = newID
		return tx.audit(auditRecord{app: a.ID, instance: true, action: "app.created", objType: ObjectApp, objID: a.ID, objName: name,
			after: appFields{name, plan, rateLimit, []string{AnyOrigin}}})
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// FindAppByID returns one app.
func (db *DB) FindAppByID(ctx context.Context, id int64) (*App, error) {
	a := &App{ID: id}
	err := db.read.QueryRowContext(ctx, `SELECT name, plan, rate_limit FROM apps WHERE id = ?`, id).
		Scan(&a.Name, &a.Plan, &a.RateLimit)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("app")
	}
	return a, err
}

func hashKey(plaintext string) []byte {
	h := keyHash(plaintext)
	return h[:]
}

// keyHash is the SHA-256 of a key's plaintext. Keys fit the stack buffer,
// sparing the request path the copy []byte(plaintext) allocates.
func keyHash(plaintext string) [32]byte {
	var buf [128]byte
	if len(plaintext) <= len(buf) {
		return sha256.Sum256(append(buf[:0], plaintext...))
	}
	return sha256.Sum256([]byte(plaintext))
}

// CreateKey makes a key for an app and returns it with its plaintext, which
// exists only in this answer: the database keeps a SHA-256 hash. A hash
// without salt is enough because the key is 192 random bits, not a password.
func (db *DB) CreateKey(ctx context.Context, appID int64, role, name string) (*Key, string, error) {
	switch role {
	case RoleAdmin, RoleRead, RoleClient:
	default:
		return nil, "", Errorf(EINVALID, "role must be one of admin, read, client")
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	plaintext := "sk_" + role[:1] + "_" + hex.EncodeToString(raw)
	k := &Key{AppID: appID, Role: role, Name: name, Prefix: plaintext[:10]}
	err := db.withTx(ctx, func(tx *Tx) error {
		var one int
		if err := tx.queryRow(`SELECT 1 FROM apps WHERE id = ?`, appID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return notFound("app")
		} else if err != nil {
			return err
		}
		k.CreatedAt = NewTime(tx.now.Truncate(time.Millisecond))
		newID, err := tx.insertID(`INSERT INTO api_keys (app_id, role, name, key_hash, key_prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			appID, role, name, hashKey(plaintext), k.Prefix, ms(tx.now))
		if err != nil {
			return err
		}
		k.ID = newID
		return tx.audit(auditRecord{app: appID, action: "key.created", objType: ObjectKey, objID: k.ID, objName: k.label(),
			after: keyFields{Role: role, Name: name, Prefix: k.Prefix}})
	})
	if err != nil {
		return nil, "", err
	}
	return k, plaintext, nil
}

// FindKeys lists the keys of an app, revoked ones included.
func (db *DB) FindKeys(ctx context.Context, appID int64) ([]*Key, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE app_id = ? ORDER BY id`, appID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys := []*Key{}
	for rows.Next() {
		k := &Key{AppID: appID}
		var created int64
		var revoked sql.NullInt64
		if err := rows.Scan(&k.ID, &k.Role, &k.Name, &k.Prefix, &created, &revoked); err != nil {
			return nil, err
		}
		k.CreatedAt = NewTime(fromMS(created))
		k.RevokedAt = TimePtr(nullMS(revoked))
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// RevokeKey revokes a key. The transaction counts as a change to what the
// caches hold, so this process forgets its keys as it commits, and every
// other process on the database as soon as it hears of the commit (see
// Tx.changed).
func (db *DB) RevokeKey(ctx context.Context, id int64) (*Key, error) {
	err := db.withTx(ctx, func(tx *Tx) error {
		k := &Key{ID: id}
		var revoked sql.NullInt64
		err := tx.queryRow(`SELECT app_id, role, name, key_prefix, revoked_at FROM api_keys WHERE id = ?`, id).
			Scan(&k.AppID, &k.Role, &k.Name, &k.Prefix, &revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("key")
		} else if err != nil {
			return err
		}
		if revoked.Valid {
			// Revoking twice changes nothing and records nothing.
			return nil
		}
		tx.changed = true
		if _, err := tx.exec(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`, ms(tx.now), id); err != nil {
			return err
		}
		at := NewTime(tx.now)
		return tx.audit(auditRecord{app: k.AppID, action: "key.revoked", objType: ObjectKey, objID: id, objName: k.label(),
			before: keyFields{Role: k.Role, Name: k.Name, Prefix: k.Prefix}, after: keyFields{Role: k.Role, Name: k.Name, Prefix: k.Prefix, RevokedAt: &at}})
	})
	if err != nil {
		return nil, err
	}
	k := &Key{ID: id}
	var created, revoked int64
	err = db.read.QueryRowContext(ctx, `SELECT app_id, role, name, key_prefix, created_at, revoked_at FROM api_keys WHERE id = ?`, id).
		Scan(&k.AppID, &k.Role, &k.Name, &k.Prefix, &created, &revoked)
	if err != nil {
		return nil, err
	}
	k.CreatedAt = NewTime(fromMS(created))
	r := NewTime(fromMS(revoked))
	k.RevokedAt = &r
	return k, nil
}

// keyFields are what the audit log compares of a key: never its hash.
type keyFields struct {
	Role      string `json:"role"`
	Name      string `json:"name"`
	Prefix    string `json:"prefix"`
	RevokedAt *Time  `json:"revokedAt,omitempty"`
}

// label names a key in the audit log: its name, else its prefix.
func (k *Key) label() string {
	if k.Name != "" {
		return k.Name
	}
	return k.Prefix
}

// keyCacheTTL bounds how long a key, or an app's origin list, stays
// trusted without a database read. A revocation or a new list reaches the
// cache sooner, through the generation (every process hears of the other
// processes' changes, see Tx.changed); the TTL is the bound should that
// ever fail.
const keyCacheTTL = time.Second

// cachedKey is a key as read at generation gen of the database: a lookup
// at a later generation reads it again, so a key read before a change
// (a revocation, a new rate limit) never outlives it.
type cachedKey struct {
	key     *Key
	expires time.Time
	gen     uint64
}

// keyCache holds the keys recently authenticated, by hash. A plain map
// under a lock rather than a sync.Map: an array key stored in an interface
// costs an allocation on every lookup, and this runs on every request.
type keyCache struct {
	mu sync.RWMutex
	m  map[[32]byte]cachedKey
}

func (c *keyCache) get(sum [32]byte) (cachedKey, bool) {
	c.mu.RLock()
	k, ok := c.m[sum]
	c.mu.RUnlock()
	return k, ok
}

func (c *keyCache) put(sum [32]byte, k cachedKey) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[[32]byte]cachedKey{}
	}
	c.m[sum] = k
	c.mu.Unlock()
}

func (c *keyCache) delete(sum [32]byte) {
	c.mu.Lock()
	delete(c.m, sum)
	c.mu.Unlock()
}

// Authenticate returns the live key for a plaintext, or an error when it is
// unknown or revoked. Hits are served from memory: this runs on every
// request, the SDK's hot paths included.
func (db *DB) Authenticate(ctx context.Context, plaintext string) (*Key, error) {
	sum := keyHash(plaintext)
	now := time.Now()
	gen := db.gen.Load()
	if c, ok := db.keys.get(sum); ok && c.gen == gen {
		if now.After(c.expires) {
			// Nothing changed since it was read: answer from it and read
			// it again in the background, so that a database that hangs
			// never holds up a request the memory can answer. A change (a
			// revocation) moves the generation, and is read on the path.
			db.inBackground(sum, func(ctx context.Context) { db.loadKey(ctx, sum, now, gen) })
		}
		return c.key, nil
	}
	return db.loadKey(ctx, sum, now, gen)
}

// inBackground runs fn once at a time per key, with the request timeout,
// on behalf of requests answered from a cache entry past its time.
func (db *DB) inBackground(key any, fn func(ctx context.Context)) {
	if _, busy := db.refreshing.LoadOrStore(key, true); busy {
		return
	}
	go func() {
		defer db.refreshing.Delete(key)
		ctx, cancel := context.WithTimeout(context.Background(), db.timeout)
		defer cancel()
		fn(ctx)
	}()
}

// loadKey reads a key by hash for Authenticate. It takes the hash by value:
// the query keeps a slice of its own copy, so only a cache miss moves a
// hash to the heap.
//
// gen is the generation read before the key: a change that commits while
// it is read leaves the entry stale at once.
func (db *DB) loadKey(ctx context.Context, sum [32]byte, now time.Time, gen uint64) (*Key, error) {
	k := &Key{}
	var revoked sql.NullInt64
	var created int64
	err := db.read.QueryRowContext(ctx, `
		SELECT k.id, k.app_id, k.role, k.name, k.key_prefix, k.created_at, k.revoked_at, a.rate_limit
		FROM api_keys k JOIN apps a ON a.id = k.app_id WHERE k.key_hash = ?`, sum[:]).
		Scan(&k.ID, &k.AppID, &k.Role, &k.Name, &k.Prefix, &created, &revoked, &k.RateLimit)
	// Unknown keys are not cached: anyone can invent them, and the cache
	// must not grow with what they send.
	if errors.Is(err, sql.ErrNoRows) || (err == nil && revoked.Valid) {
		db.keys.delete(sum)
		return nil, Errorf(EINVALID, "invalid API key")
	}
	if err != nil {
		return nil, err
	}
	k.CreatedAt = NewTime(fromMS(created))
	db.keys.put(sum, cachedKey{key: k, expires: now.Add(db.authTTL), gen: gen})
	return k, nil
}
