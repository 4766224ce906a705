package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
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
	// RoleInstance is a key of the instance, not of an app: it manages
	// apps and their keys (the provisioning routes) and nothing else.
	RoleInstance = "instance"
)

// Key is an API key as the database knows it: never the plaintext.
type Key struct {
	ID int64 `json:"id"`
	// AppID is 0, and left out, for an instance key.
	AppID int64  `json:"appId,omitempty"`
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
	return db.createApp(ctx, name, plan, rateLimit, []string{AnyOrigin}, nil, nil)
}

// createApp inserts a validated app with its allowed origins and
// retentions (nil follows the server). An empty plan takes the instance's
// default, read in the transaction; rateLimit 0 takes the plan's limit.
func (db *DB) createApp(ctx context.Context, name, plan string, rateLimit int, origins []string, eventDays, formDays *int) (*App, error) {
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
		newID, err := tx.insertID(`INSERT INTO apps (name, plan, rate_limit, created_at, allowed_origins, event_retention_days, form_retention_days) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			name, plan, rateLimit, ms(tx.now), strings.Join(origins, ","), eventDays, formDays)
		if err != nil {
			return err
		}
		a.ID = newID
		return tx.audit(auditRecord{app: a.ID, instance: true, action: "app.created", objType: ObjectApp, objID: a.ID, objName: name,
			after: appFields{Name: name, Plan: plan, RateLimit: rateLimit, AllowedOrigins: origins, EventRetentionDays: eventDays, FormRetentionDays: formDays}})
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
	return db.createKey(ctx, appID, role, name)
}

// CreateInstanceKey makes an instance key, which belongs to no app, and
// returns it with its plaintext, shown this once as CreateKey's is.
func (db *DB) CreateInstanceKey(ctx context.Context, name string) (*Key, string, error) {
	return db.createKey(ctx, 0, RoleInstance, name)
}

// createKey makes a key of role; appID is 0 for an instance key.
func (db *DB) createKey(ctx context.Context, appID int64, role, name string) (*Key, string, error) {
	if tooLong(name, MaxNameLen) {
		return nil, "", &Error{Code: EINVALID, Message: "name is too long",
			Details: map[string]any{"fields": map[string]any{"name": "must be at most 200 characters"}}}
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	plaintext := "sk_" + role[:1] + "_" + hex.EncodeToString(raw)
	k := &Key{AppID: appID, Role: role, Name: name, Prefix: plaintext[:10]}
	err := db.withTx(ctx, func(tx *Tx) error {
		var app any
		if appID != 0 {
			var one int
			if err := tx.queryRow(`SELECT 1 FROM apps WHERE id = ?`, appID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
				return notFound("app")
			} else if err != nil {
				return err
			}
			app = appID
		}
		k.CreatedAt = NewTime(tx.now.Truncate(time.Millisecond))
		newID, err := tx.insertID(`INSERT INTO api_keys (app_id, role, name, key_hash, key_prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			app, role, name, hashKey(plaintext), k.Prefix, ms(tx.now))
		if err != nil {
			return err
		}
		k.ID = newID
		return tx.audit(auditRecord{app: appID, instance: appID == 0, action: "key.created", objType: ObjectKey, objID: k.ID, objName: k.label(),
			after: keyFields{Role: role, Name: name, Prefix: k.Prefix}})
	})
	if err != nil {
		return nil, "", err
	}
	return k, plaintext, nil
}

const keyColumns = `id, COALESCE(app_id, 0), role, name, key_prefix, created_at, revoked_at`

func scanKey(row scanner) (*Key, error) {
	k := &Key{}
	var created int64
	var revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.AppID, &k.Role, &k.Name, &k.Prefix, &created, &revoked); err != nil {
		return nil, err
	}
	k.CreatedAt = NewTime(fromMS(created))
	k.RevokedAt = TimePtr(nullMS(revoked))
	return k, nil
}

// FindKeys lists the keys of an app, revoked ones included, in id order.
func (db *DB) FindKeys(ctx context.Context, appID int64) ([]*Key, error) {
	return db.findKeys(ctx, `app_id = ?`, appID)
}

// FindInstanceKeys lists the instance keys, revoked ones included, in id
// order.
func (db *DB) FindInstanceKeys(ctx context.Context) ([]*Key, error) {
	return db.findKeys(ctx, `app_id IS NULL`)
}

func (db *DB) findKeys(ctx context.Context, where string, args ...any) ([]*Key, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys := []*Key{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// FindKeysPage lists one page of an app's keys, revoked ones included,
// newest first, as the API lists resources; a missing app is not found.
func (db *DB) FindKeysPage(ctx context.Context, appID int64, o ListOptions) ([]*Key, Pagination, error) {
	if _, err := db.FindAppByID(ctx, appID); err != nil {
		return nil, Pagination{}, err
	}
	return findPage(ctx, db, "api_keys", keyColumns, "app_id = ?", []any{appID}, o, scanKey)
}

// RevokeKey revokes a key, of an app or of the instance. The transaction
// counts as a change to what the caches hold, so this process forgets its
// keys as it commits, and every other process on the database as soon as
// it hears of the commit (see Tx.changed).
func (db *DB) RevokeKey(ctx context.Context, id int64) (*Key, error) {
	return db.revokeKey(ctx, id, true)
}

// RevokeAppKey revokes a key of an app, as RevokeKey does; an instance
// key is not found, so that no instance key can revoke another through
// the API and lock the owners out of their own provisioning.
func (db *DB) RevokeAppKey(ctx context.Context, id int64) (*Key, error) {
	return db.revokeKey(ctx, id, false)
}

func (db *DB) revokeKey(ctx context.Context, id int64, instance bool) (*Key, error) {
	err := db.withTx(ctx, func(tx *Tx) error {
		k, err := scanKey(tx.queryRow(`SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) || (err == nil && k.Role == RoleInstance && !instance) {
			return notFound("key")
		} else if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			// Revoking twice changes nothing and records nothing.
			return nil
		}
		tx.changed = true
		if _, err := tx.exec(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`, ms(tx.now), id); err != nil {
			return err
		}
		at := NewTime(tx.now)
		return tx.audit(auditRecord{app: k.AppID, instance: k.AppID == 0, action: "key.revoked", objType: ObjectKey, objID: id, objName: k.label(),
			before: keyFields{Role: k.Role, Name: k.Name, Prefix: k.Prefix}, after: keyFields{Role: k.Role, Name: k.Name, Prefix: k.Prefix, RevokedAt: &at}})
	})
	if err != nil {
		return nil, err
	}
	return scanKey(db.read.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
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
		SELECT k.id, COALESCE(k.app_id, 0), k.role, k.name, k.key_prefix, k.created_at, k.revoked_at, COALESCE(a.rate_limit, 0)
		FROM api_keys k LEFT JOIN apps a ON a.id = k.app_id WHERE k.key_hash = ?`, sum[:]).
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
