package paykit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMaskDigits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		// Card and phone numbers, however written.
		{"2200123456789010", "************9010"},
		{"card2200123456789010", "card************9010"},
		{"card2200123456789010refused", "card************9010refused"},
		{"2200-1234-5678-9010", "****-****-****-9010"},
		{"2200 1234 5678 9010", "**** **** **** 9010"},
		{"2200.1234.5678.9010", "****.****.****.9010"},
		{"+7 912 345-67-89", "+* *** ***-67-89"},
		{"+79123456789", "+*******6789"},
		{"8 (912) 345-67-89", "* (***) ***-67-89"},
		{"+7(912)3456789", "+*(***)***6789"},
		{"tel:+7-912-345-67-89.", "tel:+*-***-***-67-89."},
		{"phone +992 93 123 4567 refused", "phone +*** ** *** 4567 refused"},
		{"1234567890", "******7890"},
		{"card 2200123456789010.5", "card ************9010.5"},
		{"pk_live_1234567890abc", "pk_live_******7890abc"},
		{"a 2200 1234 5678 9010 and +79001234567", "a **** **** **** 9010 and +*******4567"},
		{"id 12345678-1234-4234-8234-123456789012 phone 89123456789", "id 12345678-1234-4234-8234-123456789012 phone *******6789"},
		{"on 2026-11-22 2200123456789010", "on 2026-11-22 ************9010"},
		// Separators that do not join: two plain ones, or other characters.
		{"2200  1234 5678 9010", "2200  **** **** 9010"},
		{"22001234, 56789010", "22001234, 56789010"},
		{"2200/1234/5678/9010", "2200/1234/5678/9010"},
		// Readable: UUIDs, hashes, ext_ids, amounts, dates, addresses.
		{"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70", "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"},
		{"payment 12345678-1234-4234-8234-123456789012 not found", "payment 12345678-1234-4234-8234-123456789012 not found"},
		{"(12345678-1234-4234-8234-123456789012)", "(12345678-1234-4234-8234-123456789012)"},
		{"tx 0xabc1234567890123", "tx 0xabc1234567890123"},
		{"tx a1b2c3d4e5f60718293a4b5c6d7e8f9012345678901234567890abcdef123456", "tx a1b2c3d4e5f60718293a4b5c6d7e8f9012345678901234567890abcdef123456"},
		{"ext_id order-1001 exists", "ext_id order-1001 exists"},
		{"po-17", "po-17"},
		{"inv-2026-0001", "inv-2026-0001"},
		{"amount 12345678.90 over 300000", "amount 12345678.90 over 300000"},
		{"1500.50", "1500.50"},
		{"at 2026-11-22 03:10:00", "at 2026-11-22 03:10:00"},
		{"at 2026-11-22T03:10:00.123Z", "at 2026-11-22T03:10:00.123Z"},
		{"dial tcp 192.168.100.200:443", "dial tcp 192.168.100.200:443"},
		{"123456789", "123456789"},
		{"HTTP 500", "HTTP 500"},
		{"", ""},
		{"no digits", "no digits"},
	} {
		assert.Equal(t, tc.want, maskDigits(tc.in), "maskDigits(%q)", tc.in)
	}
}

// TestMaskDigitsLeavesNoLongRun: whatever the input, no ten digits in a
// row survive outside UUIDs and hashes.
func TestMaskDigitsLeavesNoLongRun(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		strings.Repeat("1234567890", 50),
		strings.Repeat("12 ", 200),
		"id" + strings.Repeat("9", 64),
		strings.Repeat("12-", 100),
		"+" + strings.Repeat("(1)", 40),
	} {
		out := maskDigits(in)
		digits := 0
		for i := range len(out) {
			if isDigit(out[i]) {
				digits++
			}
		}
		assert.LessOrEqual(t, digits, 4, "%q → %q", in, out)
	}
}

// FuzzMaskDigits: masking never panics, keeps the length, only turns
// digits into '*', and leaves no number of ten digits or more behind.
func FuzzMaskDigits(f *testing.F) {
	for _, s := range []string{"+7 912 345-67-89", "card2200123456789010", "2026-11-22 2200123456789010",
		"12345678-1234-4234-8234-123456789012", "0xabc1234567890123", "192.168.0.1", "1.5", "((1))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := maskDigits(in)
		if len(out) != len(in) {
			t.Fatalf("length %d → %d", len(in), len(out))
		}
		for i := range len(in) {
			if in[i] != out[i] && !(isDigit(in[i]) && out[i] == '*') {
				t.Fatalf("byte %d: %q → %q", i, in[i], out[i])
			}
		}
		if again := maskDigits(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}
