package paykit

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 14. GET /v1/banks

const banksJSON = `{
  "banks": [
    {"code":"sber","name":"Sberbank","is_active":true},
    {"code":"tinkoff","name":"T-Bank","is_active":true},
    {"code":"vtb","name":"VTB","is_active":false},
    {"code":"alif","name":"Alif Bank","is_active":true,"country":"TJ","logo":"https://cdn.example/alif.png"}
  ]
}`

func TestListBanksRequestAndDecode(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, banksJSON)
	banks, err := c.ListBanks(context.Background())
	require.NoError(t, err)
	assertWire(t, rec.only(t), http.MethodGet, "/v1/banks", "", "")
	assert.Equal(t, []Bank{
		{Code: "sber", Name: "Sberbank", IsActive: true},
		{Code: "tinkoff", Name: "T-Bank", IsActive: true},
		{Code: "vtb", Name: "VTB", IsActive: false},
		{Code: "alif", Name: "Alif Bank", IsActive: true},
	}, banks)
}

func TestListBanksEmpty(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"banks":[]}`, `{}`, `{"banks":null}`} {
		c, _ := mockClient(t, http.StatusOK, body)
		banks, err := c.ListBanks(context.Background())
		require.NoError(t, err, body)
		assert.Empty(t, banks, body)
	}
}

func TestListBanksErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		body     string
		code     string
		sentinel string
	}{
		{"500 with code", 500, opErrBody("SYS_001", "internal"), "SYS_001", "ErrInternal"},
		{"503 HTML", 503, "<h1>Service Unavailable</h1>", "", "ErrInternal"},
		{"401", 401, opErrBody("AUTH", "invalid key"), "AUTH", "ErrUnauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, tt.status, tt.body)
			banks, err := c.ListBanks(context.Background())
			assert.Nil(t, banks)
			opRequireAPIError(t, err, tt.code, tt.status)
			opAssertOnlySentinels(t, err, tt.sentinel)
		})
	}
}

func TestListBanksRefusesMalformedBody(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, `{"banks":"sber"}`)
	banks, err := c.ListBanks(context.Background())
	assert.Error(t, err)
	assert.Nil(t, banks)
}

// The bank cache never holds a lock across the network, and each caller
// waits only as long as its own context allows.
func TestBankCacheHonoursEachCallersContext(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}, 4), make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	var calls atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		arrived <- struct{}{}
		<-release
		w.Write([]byte(`{"banks":[{"code":"sber","name":"Sberbank","is_active":true}]}`))
	}))
	t.Cleanup(unblock) // runs before the server's Close, so a failure ends the test instead of hanging it
	first := make(chan error, 1)
	go func() {
		_, _, _, err := c.bankNames(ctx, 0)
		first <- err
	}()
	<-arrived // the first caller's ListBanks is in flight
	short, cancel := context.WithCancel(ctx)
	second := make(chan error, 1)
	go func() {
		_, _, _, err := c.bankNames(short, 0)
		second <- err
	}()
	cancel()
	select {
	case err := <-second:
		require.ErrorIs(t, err, context.Canceled, "the second caller left when its own context ended")
	case <-time.After(10 * time.Second):
		t.Fatal("the second caller waited for the first one's network read")
	}
	unblock()
	require.NoError(t, <-first)
	v, err := c.bankVerdict(ctx, "SBER", "sberbank")
	require.NoError(t, err)
	assert.Equal(t, same, v, "codes and names compare without regard to case")
	assert.Equal(t, int32(1), calls.Load(), "one ListBanks for all of them")
}

// A cached list is believed only when it says "same": a code it lacks or
// a name that differs reads the list again, once per comparison, before
// anything is concluded.
func TestBankVerdictRefreshesOnceBeforeConcluding(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Write([]byte(`{"banks":[{"code":"sber","name":"Sberbank","is_active":true}]}`))
			return
		}
		w.Write([]byte(`{"banks":[{"code":"sber","name":"Sberbank"},{"code":"alfa","name":"Alfa-Bank"}]}`))
	}))
	v, err := c.bankVerdict(ctx, "sber", "Sberbank")
	require.NoError(t, err)
	assert.Equal(t, same, v)
	assert.Equal(t, int32(1), calls.Load())

	v, err = c.bankVerdict(ctx, "alfa", "Alfa-Bank")
	require.NoError(t, err)
	assert.Equal(t, same, v, "the code missing from the cache refreshed it")
	assert.Equal(t, int32(2), calls.Load())

	v, err = c.bankVerdict(ctx, "sber", "Alfa-Bank")
	assert.Equal(t, different, v, "after one refresh a differing name is believed")
	assert.ErrorContains(t, err, `the payment's bank is "Alfa-Bank", not "Sberbank"`)
	assert.Equal(t, int32(3), calls.Load(), "one refresh, not more")

	v, err = c.bankVerdict(ctx, "nope", "Nope Bank")
	assert.Equal(t, cannotTell, v, "a code no list has cannot be compared")
	assert.ErrorContains(t, err, `bank "nope" is not in ListBanks`)
	assert.Equal(t, int32(4), calls.Load(), "one refresh, not more")

	v, err = c.bankVerdict(ctx, "sber", " ")
	assert.Equal(t, cannotTell, v, "a payment naming no bank cannot be compared")
	assert.Error(t, err)
	assert.Equal(t, int32(4), calls.Load(), "nothing to look up")
}

// Issue 35 §2: a payment's bank name is evidence of another bank only when
// it is the name ListBanks gives another code and none the asked code has
// (a code listed twice has both names). A name the list does not give
// (a legal name, a stale list), or a code listed without a name (null,
// missing, blank: never cached as ""), cannot tell.
func TestBankVerdictNameEvidence(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(`{"banks":[{"code":"sber","name":"Sberbank"},{"code":"SBER","name":"СберБанк"},{"code":"vtb","name":"VTB"},` +
			`{"code":"alfa","name":null},{"code":"tbank"},{"code":"ozon","name":"  "},{"code":"ozon","name":null}]}`))
	}))
	for _, tc := range []struct {
		code, name string
		want       sameness
		why        string
		lists      int32 // ListBanks read by this comparison
	}{
		{"sber", "Sberbank", same, "", 1},
		{"sber", "СБЕРБАНК", same, "", 0},    // its second listed name
		{"Sber", "  sberbank ", same, "", 0}, // case, spacing
		{"sber", "SBER", same, "", 0},        // its code
		{"sber", "Сбе\u0301рбанк", cannotTell, `cannot be compared with the names of bank "sber"`, 1},
		{"sber", "ПАО Сбербанк", cannotTell, `"ПАО Сбербанк" is no name ListBanks gives`, 1},
		{"sber", "VTB", different, `the payment's bank is "VTB", not "Sberbank": ListBanks gives that name to bank "vtb"`, 1},
		{"alfa", "Alfa-Bank", cannotTell, `ListBanks gives bank "alfa" no name`, 1},
		{"alfa", "VTB", cannotTell, `ListBanks gives bank "alfa" no name`, 1},
		{"tbank", "VTB", cannotTell, `ListBanks gives bank "tbank" no name`, 1},
		{"ozon", "Sberbank", cannotTell, `ListBanks gives bank "ozon" no name`, 1},
		{"mts", "VTB", cannotTell, `bank "mts" is not in ListBanks`, 1},
	} {
		before := calls.Load()
		v, err := c.bankVerdict(ctx, tc.code, tc.name)
		assert.Equal(t, tc.want, v, "bankVerdict(%q, %q)", tc.code, tc.name)
		if tc.why == "" {
			assert.NoError(t, err)
		} else {
			assert.ErrorContains(t, err, tc.why)
		}
		assert.Equal(t, tc.lists, calls.Load()-before, "ListBanks reads for (%q, %q)", tc.code, tc.name)
	}
}

// Over loopback: a payment read back under a name ListBanks does not give
// (a legal name, a list that lags a rename) or at a bank it lists without
// a name is an unknown outcome, never someone else's.
func TestCreatePaymentBankNameNotEvidence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stored, list string
	}{
		{"legal name", "ПАО Сбербанк", sberList("Sberbank")},
		{"list lags a rename", "Sber Bank", sberList("Sberbank")},
		{"null name", "Sberbank", `{"banks":[{"code":"sber","name":null,"is_active":true},{"code":"vtb","name":"VTB","is_active":true}]}`},
		{"missing name", "Sberbank", `{"banks":[{"code":"sber","is_active":true},{"code":"vtb","name":"VTB","is_active":true}]}`},
		{"blank name", "VTB", `{"banks":[{"code":"sber","name":" ","is_active":true},{"code":"vtb","name":"VTB","is_active":true}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &lostCreate{route: "/v1/payments", get: func(x string) (int, string) { return storedPayment(x, tc.stored) },
				banks: func(*http.Request) (int, string) { return 200, tc.list }}
			c, _ := serverClient(t, srv)
			_, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-9", Amount: dec("1500.50"), Bank: "sber"})
			require.ErrorIs(t, err, ErrUnknownOutcome)
			assert.NotErrorIs(t, err, ErrDuplicateExtID, "a name that proves nothing is not a difference")
			assert.ErrorContains(t, err, `GetPaymentByExtID("order-9")`)
			assert.Equal(t, []string{"POST /v1/payments", "POST /v1/payments", "GET /v1/payments/by-ext-id/order-9",
				"GET /v1/banks"}, srv.requests(), "the list read once: fresh, it is not read again")
		})
	}
}
