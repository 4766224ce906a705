package jsonjs

import "time"

// AppendTime appends t in TimeLayout, as t.UTC().AppendFormat(b,
// TimeLayout) does, at a fraction of its cost: AppendFormat interprets the
// layout on every call, and the SDK routes format a time in every event
// answer.
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, TimeLayout)
	}
	hour, min, sec := t.Clock()
	b = AppendDateClock(b, year, int(month), day, hour, min, sec)
	ms := t.Nanosecond() / 1e6
	return append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// AppendQuotedTime appends t in TimeLayout as a JSON string: the form
// every time in an API answer and a webhook payload takes.
func AppendQuotedTime(b []byte, t time.Time) []byte {
	return append(AppendTime(append(b, '"'), t), '"')
}

// AppendDateClock appends "YYYY-MM-DDThh:mm:ss" for a year of 0 to 9999.
func AppendDateClock(b []byte, year, month, day, hour, min, sec int) []byte {
	return append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+min/10), byte('0'+min%10), ':',
		byte('0'+sec/10), byte('0'+sec%10))
}
