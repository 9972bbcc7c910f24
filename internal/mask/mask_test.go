package mask

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestText(t *testing.T) {
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
		// Commas, slashes, underscores and double spaces join too.
		{"2200  1234 5678 9010", "****  **** **** 9010"},
		{"2200  1234  5678  9010", "****  ****  ****  9010"},
		{"2200,1234,5678,9010", "****,****,****,9010"},
		{"2200/1234/5678/9010", "****/****/****/9010"},
		{"2200_1234_5678_9010", "****_****_****_9010"},
		{"22001234, 56789010", "********, ****9010"},
		// Separators that do not join: other characters.
		{"2200;1234;5678;9010", "2200;1234;5678;9010"},
		// Amounts with thousands commas and dates in other orders stay readable.
		{"1,500.50 RUB", "1,500.50 RUB"},
		{"total 1,234,567,890.50", "total 1,234,567,890.50"},
		{"on 22/11/2026", "on 22/11/2026"},
		{"at 22/11/2026 03:10", "at 22/11/2026 03:10"},
		{"at 2026/11/22 03:10:00", "at 2026/11/22 03:10:00"},
		{"at 22.11.2026 03:10", "at 22.11.2026 03:10"},
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
		assert.Equal(t, tc.want, Text(tc.in), "Text(%q)", tc.in)
	}
}

// TestTextLeavesNoLongRun: whatever the input, no ten digits in a row
// survive outside UUIDs and hashes.
func TestTextLeavesNoLongRun(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		strings.Repeat("1234567890", 50),
		strings.Repeat("12 ", 200),
		"id" + strings.Repeat("9", 64),
		strings.Repeat("12-", 100),
		"+" + strings.Repeat("(1)", 40),
	} {
		assert.LessOrEqual(t, countDigits(Text(in)), 4, "%q", in)
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"1", "****"},
		{"1234", "****"},
		{"12345", "*2345"},
		{"2200123456789010", "************9010"},
		{"+79123456789", "+*******6789"},
		{"+7 912 345 67 89", "+* *** *** *7 89"}, // the last four characters, not digits
		{"2200-1234-5678-9010", "***************9010"},
		{"номер 2200123456789010", "***** ************9010"}, // runes, not bytes
	} {
		assert.Equal(t, tc.want, Value(tc.in), "Value(%q)", tc.in)
	}
}

func TestLast4(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"no digits", ""},
		{"12", "12"},
		{"+7 912 345-67-89", "6789"},
		{"2200 1234 5678 9010", "9010"},
	} {
		assert.Equal(t, tc.want, Last4(tc.in), "Last4(%q)", tc.in)
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/v1/payments/6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70", "/v1/payments/6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"},
		{"/v1/payments/ext/order-1001", "/v1/payments/ext/order-1001"},
		{"/v1/payments/ext/order-4111111111111111", "/v1/payments/ext/order-************1111"},
		// An escaped separator does not hide the number from the mask.
		{"/v1/payments/ext/4111%201111%201111%201111", "/v1/payments/ext/****%20****%20****%201111"},
		{"/v1/payouts/ext/%2B7%20912%20345-67-89", "/v1/payouts/ext/+*%20***%20***-67-89"},
		// A segment that does not unescape is masked as it is.
		{"/x/%zz4111111111111111", "/x/%zz************1111"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, Path(tc.in), "Path(%q)", tc.in)
	}
}

func countDigits(s string) int {
	n := 0
	for i := range len(s) {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

// FuzzText: masking never panics, keeps the length, only turns digits
// into '*', and is idempotent.
func FuzzText(f *testing.F) {
	for _, s := range []string{"+7 912 345-67-89", "card2200123456789010", "2026-11-22 2200123456789010",
		"12345678-1234-4234-8234-123456789012", "0xabc1234567890123", "192.168.0.1", "1.5", "((1))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Text(in)
		if len(out) != len(in) {
			t.Fatalf("length %d → %d", len(in), len(out))
		}
		for i := range len(in) {
			if in[i] != out[i] && (!isDigit(in[i]) || out[i] != '*') {
				t.Fatalf("byte %d: %q → %q", i, in[i], out[i])
			}
		}
		if again := Text(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}

// FuzzTextMasksCardNumbers: a card number of 13 to 19 digits, whole or in
// groups of four, between any two texts (with a space on either side, so
// that it is a word of its own), keeps at most four digits, and Path
// masks it alike inside a path segment.
func FuzzTextMasksCardNumbers(f *testing.F) {
	f.Add("card", "refused", uint64(4111111111111111), uint8(16), uint8(0))
	f.Add("2026-11-22", "", uint64(2200123456789010), uint8(19), uint8(1))
	f.Add("1,234", "1.5", uint64(1), uint8(13), uint8(2))
	f.Add("0x", "ab", uint64(1234567890123), uint8(13), uint8(3))
	f.Fuzz(func(t *testing.T, before, after string, seed uint64, n, sep uint8) {
		n = 13 + n%7
		digits := strconv.FormatUint(seed, 10)
		for len(digits) < int(n) {
			digits += digits
		}
		digits = digits[:n]
		card := digits
		if s := " -_"[sep%4%3]; sep%4 != 3 {
			var b strings.Builder
			for i := range len(digits) {
				if i > 0 && i%4 == 0 {
					b.WriteByte(s)
				}
				b.WriteByte(digits[i])
			}
			card = b.String()
		}
		in := before + " " + card + " " + after
		out := Text(in)
		at := len(before) + 1
		if len(out) != len(in) {
			t.Fatalf("length %d → %d", len(in), len(out))
		}
		if kept := countDigits(out[at : at+len(card)]); kept > 4 {
			t.Fatalf("%q → %q keeps %d digits of %q", in, out, kept, card)
		}
		if p := Path("/v1/payments/ext/" + card); countDigits(p) > 1+4 {
			t.Fatalf("Path keeps digits of %q: %q", card, p)
		}
	})
}

// Key shows no more of an API key than its first four characters, and
// nothing of a key that short.
func TestKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"pk_sandbox": "pk_s…", "pk_sa": "pk_s…", "abcd": "…", "": "…", "ключ_api": "ключ…",
	} {
		assert.Equal(t, want, Key(in), "Key(%q)", in)
	}
}

// A URL keeps where it leads and loses what it may carry of a secret:
// user information (a name alone can be the credential) and every query
// value; one that does not parse shows none of its text.
func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://shop.example/paykit/hook", "https://shop.example/paykit/hook"},
		{"https://user:s3cret@shop.example/hook", "https://xxxxx:xxxxx@shop.example/hook"},
		{"https://s3cret@shop.example/hook", "https://xxxxx@shop.example/hook"},
		{"http://127.0.0.1:8090/hook?token=s3cret&api_key=pk_live_1", "http://127.0.0.1:8090/hook?api_key=xxxxx&token=xxxxx"},
		{"http://[::1]:8090/a/b#frag", "http://[::1]:8090/a/b#frag"},
		{"http://shop.example/%zz?token=s3cret", "(a URL that does not parse)"},
		{"", ""},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(URL(c.in), "s3cret") {
			t.Errorf("URL(%q) shows the secret", c.in)
		}
	}
}
