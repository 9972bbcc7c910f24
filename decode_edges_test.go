package paykit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
// response may carry) is refused in microseconds, not the seconds
// big-number parsing takes.
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

func TestErrorDataIsBounded(t *testing.T) {
	t.Parallel()
	big := `{"error":"PAY_003","message":"dup","data":{"ext_id":"o-1","junk":"` + strings.Repeat("x", 200_000) + `"}}`
	e := decodeError(409, []byte(big))
	assert.LessOrEqual(t, len(e.Data), MaxErrorDataBytes)
	assert.Equal(t, "o-1", e.ExtID(), "what ExtID reads is kept")
	e = decodeError(500, []byte(`{"error":"SYS_001","data":{"junk":"`+strings.Repeat("x", 200_000)+`"}}`))
	assert.Nil(t, e.Data)
	small := decodeError(409, []byte(`{"error":"PAY_003","data":{"ext_id":"o-2","n":1}}`))
	assert.JSONEq(t, `{"ext_id":"o-2","n":1}`, string(small.Data), "small data is kept whole")
}

func TestListPayoutsSendsSubSecondBounds(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, `{"payouts":[],"total":0,"limit":100,"offset":0}`)
	_, err := c.ListPayouts(context.Background(), ListPayoutsParams{
		From: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC),
		To:   time.Date(2026, 11, 22, 15, 0, 0, 700_000_000, time.FixedZone("MSK", 3*3600))})
	require.NoError(t, err)
	assert.Equal(t, "/v1/payouts?from=2026-11-22T11%3A00%3A00Z&to=2026-11-22T12%3A00%3A00.7Z", rec.only(t).URI)
}

func TestReceiptLimitIsTenMillionBytes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 10_000_000, MaxAttachmentSize)
	png := pngBytes(t)
	exact := append(png, make([]byte, MaxAttachmentSize-len(png))...)
	c, rec := mockClient(t, http.StatusOK, `{"id":"`+paymentID+`","ext_id":"o-1","amount":100,"status":"PROCESSING"}`)
	_, err := c.ConfirmPayment(context.Background(), paymentID, &Attachment{Content: strings.NewReader(string(exact))})
	require.NoError(t, err, "10,000,000 bytes is within the limit")
	assert.Equal(t, 1, rec.count())
	over := append(exact, 0)
	_, err = c.ConfirmPayment(context.Background(), paymentID, &Attachment{Content: strings.NewReader(string(over))})
	var vErr *ValidationError
	require.ErrorAs(t, err, &vErr)
	assert.Equal(t, "attachment", vErr.Field)
	assert.Equal(t, 1, rec.count(), "nothing sent")
}

// payoutServer lists n payouts with ids po-0…po-(n-1), honouring limit and
// offset unless told to misbehave: ignore offset, echo a wrong offset, or
// leave total out.
type payoutServer struct {
	mu         sync.Mutex
	n          int
	ignoreOff  bool
	noTotal    bool
	echoOffset func(int) int
	pages      int
}

func (s *payoutServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit == 0 {
		limit = 100
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	if s.ignoreOff {
		off = 0
	}
	var items []string
	for i := off; i < off+limit && i < s.n; i++ {
		items = append(items, fmt.Sprintf(`{"id":"po-%d","ext_id":"e-%d","amount":100,"method":"card","requisites":"1","status":"pending"}`, i, i))
	}
	echo := off
	if s.echoOffset != nil {
		echo = s.echoOffset(off)
	}
	total := fmt.Sprintf(`,"total":%d`, s.n)
	if s.noTotal {
		total = ""
	}
	fmt.Fprintf(w, `{"payouts":[%s]%s,"limit":%d,"offset":%d}`, strings.Join(items, ","), total, limit, echo)
	s.pages++
}

func collect(t *testing.T, seq func(func(Payout, error) bool)) ([]string, error) {
	t.Helper()
	var ids []string
	for p, err := range seq {
		if err != nil {
			return ids, err
		}
		ids = append(ids, p.ID)
	}
	return ids, nil
}

func TestAllPayoutsReusableAndConcurrent(t *testing.T) {
	t.Parallel()
	c, _ := serverClient(t, &payoutServer{n: 10})
	seq := c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 3})
	first, err := collect(t, seq)
	require.NoError(t, err)
	second, err := collect(t, seq)
	require.NoError(t, err)
	assert.Len(t, first, 10)
	assert.Equal(t, first, second, "ranging again starts afresh")

	var wg sync.WaitGroup
	counts := make([]int, 4)
	for g := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, err := collect(t, seq)
			assert.NoError(t, err)
			counts[g] = len(ids)
		}()
	}
	wg.Wait()
	assert.Equal(t, []int{10, 10, 10, 10}, counts)
}

func TestAllPayoutsNoticesStuckPaging(t *testing.T) {
	t.Parallel()
	t.Run("offset ignored", func(t *testing.T) {
		t.Parallel()
		srv := &payoutServer{n: 50, ignoreOff: true}
		c, _ := serverClient(t, srv)
		ids, err := collect(t, c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 2}))
		require.ErrorIs(t, err, errPagingStuck)
		assert.Equal(t, []string{"po-0", "po-1"}, ids, "each payout once")
		assert.LessOrEqual(t, srv.pages, 2)
	})
	t.Run("offset echo wrong", func(t *testing.T) {
		t.Parallel()
		srv := &payoutServer{n: 50, echoOffset: func(int) int { return 0 }}
		c, _ := serverClient(t, srv)
		_, err := collect(t, c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 10}))
		require.ErrorIs(t, err, errPagingStuck)
		assert.Equal(t, 2, srv.pages)
	})
	t.Run("no total", func(t *testing.T) {
		t.Parallel()
		c, _ := serverClient(t, &payoutServer{n: 5, noTotal: true})
		_, err := collect(t, c.AllPayouts(context.Background(), ListPayoutsParams{Limit: 2}))
		require.ErrorIs(t, err, errNoTotal)
	})
}
