package ledger

import (
	"testing"

	"github.com/shopspring/decimal"
)

// Scaled keeps every place an amount carries and pads to the minimum: the
// API's JSON numbers and the pages' amounts depend on both.
func TestScaled(t *testing.T) {
	for _, tc := range []struct {
		in   string
		min  int32
		want string
	}{
		{"1500.5", 2, "1500.50"}, {"1500.50", 0, "1500.50"}, {"1500", 0, "1500"}, {"1500", 2, "1500.00"},
		{"12000.125", 2, "12000.125"}, {"-3.1", 2, "-3.10"}, {"0", 2, "0.00"}, {"1.000001", 2, "1.000001"},
	} {
		if got := Scaled(decimal.RequireFromString(tc.in), tc.min); got != tc.want {
			t.Errorf("Scaled(%s, %d) = %q, want %q", tc.in, tc.min, got, tc.want)
		}
	}
}
