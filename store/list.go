package store

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
		cursor := itoa(next)
		p.HasMore, p.NextPage, p.NextCursor = true, &next, &cursor
	}
	return p
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
