package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// ListOptions selects one page of a list: Page is 1-based.
type ListOptions struct {
	Limit int
	Page  int
}

// Pagination carries both documented pagination shapes at once, so clients
// written against either keep working.
type Pagination struct {
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
	Total      int     `json:"total"`
	NextPage   *int    `json:"nextPage"`
}

func (o ListOptions) offset() int { return (o.Page - 1) * o.Limit }

func newPagination(o ListOptions, total int) Pagination {
	p := Pagination{Total: total}
	if o.offset()+o.Limit < total {
		next := o.Page + 1
		cursor := strconv.Itoa(next)
		p.HasMore, p.NextPage, p.NextCursor = true, &next, &cursor
	}
	return p
}

// findPage reads one page of `from` (newest id first) and the total count,
// in one read transaction so that the two agree. from may carry an alias
// ("webhook_deliveries d"); where and columns then use it.
func findPage[T any](ctx context.Context, db *DB, from, columns, where string, args []any, o ListOptions, scan func(scanner) (T, error)) ([]T, Pagination, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, Pagination{}, err
	}
	defer tx.Rollback()
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, args...).Scan(&total); err != nil {
		return nil, Pagination{}, err
	}
	order := pageOrder(from)
	rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM `+from+` WHERE `+where+` ORDER BY `+order+` DESC LIMIT ? OFFSET ?`,
		append(args, o.Limit, o.offset())...)
	if err != nil {
		return nil, Pagination{}, err
	}
	defer rows.Close()
	list := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, Pagination{}, err
		}
		list = append(list, v)
	}
	return list, newPagination(o, total), rows.Err()
}

// pageOrder is the column findPage orders from's rows by: their id,
// qualified by from's alias when it has one.
func pageOrder(from string) string {
	if i := strings.LastIndexByte(from, ' '); i > 0 {
		return from[i+1:] + ".id"
	}
	return "id"
}
