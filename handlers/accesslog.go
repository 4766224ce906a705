package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"service/jsonjs"
)

// logRequest writes the request's log line: at info level, message
// "request", with request_id, method, path, status, duration_ms, app_id
// (once a key is known) and client_closed (when the client left early).
//
// With AccessLog set, the line is encoded here, straight into that writer,
// in exactly the form slog's JSON handler gives it: on the SDK routes
// slog's generic path (attribute values, a caller lookup, a float through
// encoding/json) cost more than the rest of the answer's bookkeeping.
func (s *Server) logRequest(c *request, r *http.Request, end time.Time, closed bool) {
	ctx := context.Background()
	if !s.Log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	took := float64(end.Sub(c.start).Microseconds()) / 1000
	if s.AccessLog == nil {
		attrs := []slog.Attr{slog.String("request_id", c.info.id),
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", c.rec.status), slog.Float64("duration_ms", took)}
		// An instance key has no app.
		if c.info.key != nil && c.info.key.AppID != 0 {
			attrs = append(attrs, slog.Int64("app_id", c.info.key.AppID))
		}
		if closed {
			attrs = append(attrs, slog.Bool("client_closed", true))
		}
		s.Log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		return
	}
	bp := lineBuf.Get().(*[]byte)
	b := append((*bp)[:0], `{"time":"`...)
	b = appendLogTime(b, end)
	b = append(b, `","level":"INFO","msg":"request","request_id":`...)
	b = appendJSONString(b, c.info.id)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, r.Method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, r.URL.Path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(c.rec.status), 10)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, took, 'f', -1, 64)
	if c.info.key != nil && c.info.key.AppID != 0 {
		b = append(b, `,"app_id":`...)
		b = strconv.AppendInt(b, c.info.key.AppID, 10)
	}
	if closed {
		b = append(b, `,"client_closed":true`...)
	}
	b = append(b, "}\n"...)
	_, _ = s.AccessLog.Write(b)
	*bp = b
	lineBuf.Put(bp)
}

// appendLogTime appends t as t.AppendFormat(b, time.RFC3339Nano) does, the
// form slog gives, without interpreting the layout on every request line.
func appendLogTime(b []byte, t time.Time) []byte {
	_, off := t.Zone()
	year, month, day := t.Date()
	if off%60 != 0 || year < 0 || year > 9999 {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	hour, min, sec := t.Clock()
	b = jsonjs.AppendDateClock(b, year, int(month), day, hour, min, sec)
	if ns := t.Nanosecond(); ns != 0 {
		var d [10]byte
		d[0] = '.'
		for i := 9; i > 0; i-- {
			d[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(d)
		for d[n-1] == '0' {
			n--
		}
		b = append(b, d[:n]...)
	}
	if off == 0 {
		return append(b, 'Z')
	}
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	h, m := off/3600, off/60%60
	return append(b, sign, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}

var lineBuf = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendJSONString quotes s as slog's JSON handler does: without HTML
// escaping, invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
