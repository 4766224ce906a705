package dashboard

import "strconv"

// FailSignInsFrom records one failed sign-in from each of n addresses,
// which sign-ins through HTTP could not do in a test's time: each costs a
// bcrypt check.
func FailSignInsFrom(d *Dashboard, n int) {
	now := d.Now()
	for i := range n {
		d.throttle.failed("addr:10."+strconv.Itoa(i>>16&255)+"."+strconv.Itoa(i>>8&255)+"."+strconv.Itoa(i&255), maxAddrFailures, now)
	}
}
