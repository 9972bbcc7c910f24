package paykit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowEnum is decodeEnum without its allocation-free fast path.
func slowEnum(b []byte) (PaymentStatus, error) {
	var s string
	if string(b) == "null" {
		return "", nil
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return "", err
	}
	for _, k := range paymentStatuses {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	return PaymentStatus(s), nil
}

func TestDecodeEnumFastPathAgrees(t *testing.T) {
	for _, in := range []string{`"PENDING"`, `"pending"`, `"Cancelled_Appeal"`, `"dispute"`, `"\u0050ENDING"`,
		`"ON_HOLD"`, `"PENDINGX"`, `""`, `null`, `"PEND\"ING"`, `"ſtatus"`, `5`, `"K"`} {
		got, gotErr := decodeEnum([]byte(in), paymentStatuses...)
		want, wantErr := slowEnum([]byte(in))
		assert.Equal(t, want, got, in)
		assert.Equal(t, wantErr == nil, gotErr == nil, in)
	}
}

func TestDecodeEnumKnownValuesDoNotAllocate(t *testing.T) {
	b := []byte(`"processing"`)
	allocs := testing.AllocsPerRun(100, func() {
		if s, _ := decodeEnum(b, paymentStatuses...); s != PaymentStatusProcessing {
			t.Fatal(s)
		}
	})
	assert.Zero(t, allocs)
}

func TestAPITimeLayouts(t *testing.T) {
	for in, want := range map[string]time.Time{
		`"2026-11-22T10:20:00Z"`:           time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22T10:20:00.123456789Z"`: time.Date(2026, 11, 22, 10, 20, 0, 123456789, time.UTC),
		`"2026-11-22T13:20:00+03:00"`:      time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22T10:20:00"`:            time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22 10:20:00"`:            time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22 13:20:00+03:00"`:      time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22"`:                     time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		`" 2026-11-22T10:20:00Z "`:         time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`"2026-11-22T10:20:00\u002B00:00"`: time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC),
		`null`:                             {},
		`""`:                               {},
	} {
		var got apiTime
		require.NoError(t, got.UnmarshalJSON([]byte(in)), in)
		assert.True(t, want.Equal(time.Time(got)), "%s: got %v", in, time.Time(got))
		if !time.Time(got).IsZero() {
			assert.Equal(t, time.UTC, time.Time(got).Location(), in)
		}
	}
	for _, in := range []string{`"yesterday"`, `5`, `"2026-13-01T00:00:00Z"`, `{}`} {
		var got apiTime
		assert.Error(t, got.UnmarshalJSON([]byte(in)), in)
	}
}

// FuzzStrictRFC3339AgreesWithParse checks the claim apiTime's fast path
// rests on: whatever time.Time.UnmarshalJSON accepts, time.Parse with
// RFC3339Nano accepts too, with the same instant.
func FuzzStrictRFC3339AgreesWithParse(f *testing.F) {
	for _, s := range []string{"2026-11-22T10:20:00Z", "2026-11-22T10:20:00.5+03:00", "2026-11-22T10:20:00,5Z",
		"2026-02-30T10:20:00Z", "0000-01-01T00:00:00-23:59", "2026-11-22t10:20:00z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, _ := json.Marshal(s)
		var strict time.Time
		if strict.UnmarshalJSON(b) != nil {
			return
		}
		parsed, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("%q: strict accepts, Parse refuses: %v", s, err)
		}
		if !parsed.Equal(strict) {
			t.Fatalf("%q: strict %v, Parse %v", s, strict, parsed)
		}
	})
}

// TestHugeNumbersNeverReachTheParser counts calls of parseDecimal while
// hostile amounts go through every decoder: none may reach it. (Not
// parallel: it swaps a package variable.)
func TestHugeNumbersNeverReachTheParser(t *testing.T) {
	var parsed atomic.Int32
	orig := parseDecimal
	parseDecimal = func(s string) (decimal.Decimal, error) {
		// The bodies' other amounts are short and plain; only a hostile
		// token is long or has an exponent.
		if len(s) > maxAmountDigits+2 || strings.ContainsAny(s, "eE") {
			parsed.Add(1)
		}
		return orig(s)
	}
	defer func() { parseDecimal = orig }()

	for _, n := range hostileNumbers {
		name := n
		if len(name) > 20 {
			name = name[:20] + "…"
		}
		bodies := map[string]any{
			`{"balance":%s,"balance_frozen":0,"currency":"USDT"}`:                 new(Balance),
			`{"id":"x","amount":%s,"status":"PENDING"}`:                           new(Payment),
			`{"id":"x","amount":1,"dispute":{"amount":%s}}`:                       new(Payment),
			`{"id":"x","amount":1,"requisites":{"amount_local":%s}}`:              new(Payment),
			`{"id":"x","amount":%s,"requisites":"2200"}`:                          new(Payout),
			`{"payouts":[{"id":"x","amount":%s}],"total":1,"limit":1,"offset":0}`: new(PayoutList),
			`{"id":"t","balance":1,"balance_frozen":%s,"withdrawal_fee":1}`:       new(Terminal),
			`{"success":true,"amount":%s}`:                                        new(Transfer),
			`{"id":"w","amount":1,"fee":%s}`:                                      new(Withdrawal),
			`{"fee":%s,"currency":"USDT"}`:                                        new(WithdrawalFee),
		}
		for format, out := range bodies {
			body := fmt.Sprintf(format, n)
			parsed.Store(0)
			err := decodeBody([]byte(body), out)
			require.ErrorIs(t, err, errAmountRange, "%s in %T", name, out)
			assert.Equal(t, int32(0), parsed.Load(), "%s in %T reached the parser", name, out)
			// The same through json.Unmarshal (a webhook body is decoded so).
			parsed.Store(0)
			require.Error(t, json.Unmarshal([]byte(body), out), "%s in %T", name, out)
			assert.Equal(t, int32(0), parsed.Load(), "%s in %T reached the parser", name, out)
		}
	}
	// Real figures pass and are parsed.
	var b Balance
	require.NoError(t, decodeBody([]byte(`{"balance":"123456789012345678901234567890.1234567890","balance_frozen":1e30}`), &b))
	assert.Equal(t, "123456789012345678901234567890.123456789", b.Balance.String())
	assert.Equal(t, int32(1), parsed.Load(), "1e30 is within the bounds and parsed")
}

// BenchmarkDecodeHugeNumberBody: a 16 MiB body of digits (the most a
// response may carry) is refused after one linear scan by encoding/json
// (about 0.1 s), not the seconds or hours big-number parsing takes.
func BenchmarkDecodeHugeNumberBody(b *testing.B) {
	body := []byte(`{"balance":` + strings.Repeat("7", MaxResponseBytes-40) + `,"currency":"USDT"}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var bal Balance
		if err := decodeBody(body, &bal); err == nil {
			b.Fatal("accepted")
		}
	}
}

func TestISO8601Offsets(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC)
	for _, v := range []string{
		"2026-11-22T10:20:00Z", "2026-11-22T10:20:00z", "2026-11-22t10:20:00Z",
		"2026-11-22T10:20:00+0000", "2026-11-22T13:20:00+0300", "2026-11-22T13:20:00+03",
		"2026-11-22T13:20:00+03:00", "2026-11-22T07:20:00-0300", "2026-11-22T07:20:00-03",
		"2026-11-22 13:20:00+0300", "2026-11-22T10:20:00.000+0000",
	} {
		var p Payment
		require.NoError(t, json.Unmarshal([]byte(`{"id":"x","valid_until":"`+v+`","created_at":"`+v+`"}`), &p), v)
		assert.True(t, want.Equal(p.ValidUntil), "%s → %s", v, p.ValidUntil)
		assert.Equal(t, time.UTC, p.ValidUntil.Location(), v)
		assert.True(t, want.Equal(p.CreatedAt), v)
	}
	for _, bad := range []string{"2026-11-22T10:20:00+3", "2026-11-22T10:20:00+03000", "yesterday"} {
		var p Payment
		assert.Error(t, json.Unmarshal([]byte(`{"valid_until":"`+bad+`"}`), &p), bad)
	}
}

// The fast path for strict RFC 3339 stays allocation-free.
func TestRFC3339FastPathAllocs(t *testing.T) {
	b := []byte(`"2026-11-22T10:20:00.25Z"`)
	var at apiTime
	allocs := testing.AllocsPerRun(100, func() { _ = at.UnmarshalJSON(b) })
	assert.Zero(t, allocs)
}

// hostileNumbers are amounts no real response carries; each must be
// refused by reading its text, before any big-number parsing.
var hostileNumbers = []string{
	strings.Repeat("9", 1_500_000),
	`"` + strings.Repeat("1", 100_000) + `"`,
	"1e999999999",
	`"1e999999999"`,
	"-1E-99999",
	"0." + strings.Repeat("0", 50) + "1",
	"1" + strings.Repeat("0", 41),
	"1e31",
}

// unquote's fast path must decode exactly what json.Unmarshal decodes, and
// refuse what it refuses.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`""`, `"PENDING"`, `"a b"`, `"2026-11-22T10:00:00Z"`, `"a\"b"`, `"a\\b"`,
		`"\u0041"`, `"заказ"`, "\"\xff\"", "\"a\x01\"", "\"a\x7f\"", `"a"b"`, `"`, `x`, `1`, `null`, ` "a"`} {
		var want string
		wantErr := json.Unmarshal([]byte(in), &want)
		got, err := unquote([]byte(in))
		if wantErr != nil {
			assert.Error(t, err, "%q", in)
			continue
		}
		assert.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
}

// ListPayouts decodes its page without PayoutList's per-item
// UnmarshalJSON; the result must be the one that path gives.
func TestListPayoutsDecodesLikePayoutList(t *testing.T) {
	t.Parallel()
	for _, body := range []string{payoutListJSON, string(benchPayoutListJSON), `{"payouts":null,"total":0}`, `{"payouts":[]}`} {
		var want PayoutList
		require.NoError(t, json.Unmarshal([]byte(body), &want))
		c, _ := mockClient(t, http.StatusOK, body)
		got, err := c.ListPayouts(ctx, ListPayoutsParams{})
		require.NoError(t, err)
		assert.Equal(t, &want, got)
	}
}
