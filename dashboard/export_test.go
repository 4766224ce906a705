package dashboard

import (
	"context"
	"strconv"
)

// FailSignInsFrom records a failed sign-in against each of n client
// addresses, numbered from first, under the keys the sign-in page uses:
// more than sign-ins through HTTP could make in a test's time, since each
// costs a bcrypt check.
func FailSignInsFrom(d *Dashboard, first, n int) error {
	for i := first; i < first+n; i++ {
		addr := "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
		if err := d.DB.RecordSignInFailure(context.Background(), "addr:"+addr); err != nil {
			return err
		}
	}
	return nil
}
