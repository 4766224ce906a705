package store

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"time"
)

// AnyOrigin in an app's allowed origins lets a browser page on any origin
// call the SDK routes. It is the default: SDK keys are public by nature,
// and a list is a guard against other sites spending an app's budget.
const AnyOrigin = "*"

// MaxAllowedOrigins bounds an app's origin list.
const MaxAllowedOrigins = 100

// ParseAllowedOrigins reads a comma-separated origin list, as given to
// `service apps update --allowed-origins`. Each entry is "*" or a
// scheme://host[:port] origin without path; they are returned lower-cased,
// without the scheme's default port and without duplicates, which is how
// browsers send the Origin header.
func ParseAllowedOrigins(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		o := strings.ToLower(strings.TrimSpace(part))
		if o == "" {
			continue
		}
		if o != AnyOrigin {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
				(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
				return nil, &Error{Code: EINVALID, Message: "allowed origins must be * or scheme://host[:port]",
					Details: map[string]any{"fields": map[string]any{"allowedOrigins": "invalid origin " + strings.TrimSpace(part)}}}
			}
			// Browsers leave a scheme's default port out of Origin, so an
			// entry that names it would never match.
			host := u.Host
			if port := u.Port(); port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
				host = strings.TrimSuffix(host, ":"+port) // "a.example:" too
			}
			o = u.Scheme + "://" + host
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		return nil, &Error{Code: EINVALID, Message: "allowed origins must not be empty; use * to allow any origin",
			Details: map[string]any{"fields": map[string]any{"allowedOrigins": "is required"}}}
	}
	if len(out) > MaxAllowedOrigins {
		return nil, &Error{Code: EINVALID, Message: "too many allowed origins",
			Details: map[string]any{"fields": map[string]any{"allowedOrigins": "must list at most 100 origins"}}}
	}
	return out, nil
}

// SetAppAllowedOrigins replaces the origins a browser app may call the SDK
// routes from (as ParseAllowedOrigins returns them).
func (db *DB) SetAppAllowedOrigins(ctx context.Context, appID int64, origins []string) error {
	if len(origins) == 0 {
		return Errorf(EINVALID, "allowed origins must not be empty; use * to allow any origin")
	}
	err := db.withTx(ctx, func(tx *Tx) error {
		before, err := tx.appFields(appID)
		if err != nil {
			return err
		}
		if _, err := tx.exec(`UPDATE apps SET allowed_origins = ? WHERE id = ?`, strings.Join(origins, ","), appID); err != nil {
			return err
		}
		tx.changed = true
		after := *before
		after.AllowedOrigins = origins
		return tx.audit(auditRecord{app: appID, action: "app.updated", objType: ObjectApp, objID: appID, objName: before.Name, before: before, after: &after})
	})
	return err
}

// cachedOrigins is an app's origin list as read at generation gen.
type cachedOrigins struct {
	list    []string
	expires time.Time
	gen     uint64
}

// AllowedOrigins returns the origins an app's SDK routes answer, ["*"] by
// default. An app that does not exist answers the default, so a browser
// sees the API's own 403 or 404 rather than a CORS failure. Reads are
// cached as keys are (see keyCacheTTL): every SDK request from a browser asks.
func (db *DB) AllowedOrigins(ctx context.Context, appID int64) ([]string, error) {
	now := time.Now()
	gen := db.gen.Load()
	if v, ok := db.origins.Load(appID); ok {
		if c := v.(cachedOrigins); c.gen == gen {
			if now.After(c.expires) {
				// As for keys (Authenticate): answered from memory, read
				// again off the request's path.
				db.inBackground(appID, func(ctx context.Context) { db.loadOrigins(ctx, appID, now, gen) })
			}
			return c.list, nil
		}
	}
	return db.loadOrigins(ctx, appID, now, gen)
}

func (db *DB) loadOrigins(ctx context.Context, appID int64, now time.Time, gen uint64) ([]string, error) {
	var raw string
	err := db.read.QueryRowContext(ctx, `SELECT allowed_origins FROM apps WHERE id = ?`, appID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		// Not cached: anyone can invent app ids.
		return []string{AnyOrigin}, nil
	}
	if err != nil {
		return nil, err
	}
	list := strings.Split(raw, ",")
	db.origins.Store(appID, cachedOrigins{list: list, expires: now.Add(db.authTTL), gen: gen})
	return list, nil
}
