package store

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// A payout list's bounds are compared as nanoseconds in the file: a date
// an int64 of them cannot hold (GET /v1/payouts?to=9999-12-31) must still
// bound nothing, or everything, as it does in memory (storetest's
// QueriesAgree checks the rows on both stores through the sandbox).
func TestPayoutWhereClampsFarBounds(t *testing.T) {
	day := func(y int) time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	now := time.Date(2025, 3, 1, 12, 0, 0, 5, time.UTC)
	for _, c := range []struct {
		f    ledger.PayoutFilter
		want string
	}{
		{ledger.PayoutFilter{From: day(1000), To: day(9999)},
			fmt.Sprint([]any{"k", int64(math.MinInt64), int64(math.MaxInt64)})},
		{ledger.PayoutFilter{From: day(9999), To: day(1000)},
			fmt.Sprint([]any{"k", int64(math.MaxInt64), int64(math.MinInt64)})},
		{ledger.PayoutFilter{From: now, To: now}, fmt.Sprint([]any{"k", now.UnixNano(), now.UnixNano()})},
	} {
		where, args := payoutWhere(c.f, "k")
		if where != "WHERE api_key = ? AND created_at >= ? AND created_at <= ?" || fmt.Sprint(args) != c.want {
			t.Errorf("payoutWhere(%v, %v) = %q %v, want args %s", c.f.From, c.f.To, where, args, c.want)
		}
	}
}
