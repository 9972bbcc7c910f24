package paykit

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetryTableCoversEveryOperation pins the retry class of each endpoint:
// a change here changes the SDK's money guarantees and must be deliberate.
func TestRetryTableCoversEveryOperation(t *testing.T) {
	t.Parallel()
	want := map[*operation]retryClass{
		opCreatePayment: classCreate, opGetPayment: classRead, opGetPaymentByExtID: classRead,
		opConfirmPayment: classStateChange, opCancelPayment: classStateChange, opOpenDispute: classStateChange,
		opCancelDispute: classStateChange, opCreatePayout: classCreate, opGetPayout: classRead,
		opGetPayoutByExtID: classRead, opListPayouts: classRead, opListTerminals: classRead, opGetBalance: classRead,
		opListBanks: classRead, opCreateTransfer: classMoneyMove, opCreateWithdrawal: classMoneyMove,
		opGetWithdrawal: classRead, opGetWithdrawalFee: classRead,
	}
	require.Len(t, want, 18, "one entry per endpoint of the spec")
	for op, class := range want {
		assert.Equal(t, class, op.class, op.name)
		assert.Equal(t, class == classRead, op.method == http.MethodGet, op.name)
		assert.Equal(t, class == classMoneyMove, op.check != "", op.name)
	}
	for op, code := range map[*operation]string{opCreatePayment: "PAY_003", opCreatePayout: "PAY_003",
		opConfirmPayment: "PAY_008", opCancelPayment: "PAY_007", opOpenDispute: "DIS_002", opCancelDispute: "DIS_003"} {
		assert.Equal(t, code, op.doneCode, op.name)
	}
}

func response(status int, body string, header ...string) *http.Response {
	resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
	for i := 0; i+1 < len(header); i += 2 {
		resp.Header.Set(header[i], header[i+1])
	}
	return resp
}

func TestCheckRetryByClass(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, 200, `{}`, WithMaxRetries(DefaultMaxRetries))
	transportErr := errors.New("connection reset by peer")
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name    string
		op      *operation
		gotConn bool
		resp    *http.Response
		err     error
		want    bool
	}{
		{"read: transport error", opGetPayment, true, nil, transportErr, true},
		{"read: 500", opGetPayment, false, response(500, `{"error":"PAY_001"}`), nil, true},
		{"read: 502 html", opListBanks, false, response(502, `<html>`), nil, true},
		{"read: 501", opListBanks, false, response(501, ``), nil, false},
		{"read: bare 429", opGetBalance, false, response(429, `slow down`), nil, true},
		{"read: 429 with an API code", opGetBalance, false, response(429, `{"error":"PAY_005"}`), nil, false},
		{"read: 404", opGetPayment, false, response(404, `{"error":"PAY_006"}`), nil, false},
		{"read: 200", opGetPayment, false, response(200, `{}`), nil, false},
		{"create: transport error", opCreatePayment, true, nil, transportErr, true},
		{"create: 500 PAY_001", opCreatePayment, false, response(500, `{"error":"PAY_001"}`), nil, true},
		{"create: 503 PAY_004 is business", opCreatePayment, false, response(503, `{"error":"PAY_004"}`), nil, false},
		{"create: 503 bare", opCreatePayment, false, response(503, ``), nil, true},
		{"create: 429 PAY_005", opCreatePayment, false, response(429, `{"error":"PAY_005"}`), nil, false},
		{"create: bare 429 not retried", opCreatePayout, false, response(429, ``), nil, false},
		{"create: 409 PAY_003", opCreatePayout, false, response(409, `{"error":"PAY_003"}`), nil, false},
		{"create: SYS_001", opCreatePayout, false, response(500, `{"error":"SYS_001"}`), nil, true},
		{"state: transport error", opConfirmPayment, true, nil, transportErr, true},
		{"state: 500", opCancelDispute, false, response(500, `{"error":"SYS_001"}`), nil, true},
		{"state: 400", opCancelPayment, false, response(400, `{"error":"PAY_007"}`), nil, false},
		{"money: dial failed", opCreateTransfer, false, nil, dialErr, true},
		{"money: DNS failed", opCreateTransfer, false, nil, &net.DNSError{Err: "no such host", Name: "api.example"}, true},
		{"money: unexplained error, no trace (a custom transport)", opCreateTransfer, false, nil, transportErr, false},
		{"money: lost after connecting", opCreateTransfer, true, nil, transportErr, false},
		{"money: dial error after a connection was obtained", opCreateWithdrawal, true, nil, dialErr, false},
		{"money: 500", opCreateWithdrawal, true, response(500, ``), nil, false},
		{"money: 503", opCreateTransfer, true, response(503, ``, "Retry-After", "1"), nil, false},
		{"money: 400", opCreateWithdrawal, true, response(400, `{"error":"WDR_002"}`), nil, false},
		{"any: untrusted certificate", opGetPayment, false, nil, x509.UnknownAuthorityError{}, false},
		{"any: body over the cap", opGetPayment, true, nil, errResponseTooLarge, false},
	}
	for _, tc := range cases {
		st := &callState{op: tc.op, attempts: 1}
		st.gotConn.Store(tc.gotConn)
		status, data := 0, []byte(nil)
		if tc.resp != nil {
			status = tc.resp.StatusCode
			data, _ = io.ReadAll(tc.resp.Body)
		}
		st.record(ctx, status, data, tc.err)
		got, err := c.checkRetry(context.WithValue(ctx, stateKey{}, st), tc.resp, tc.err)
		assert.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}

	cancelled, cancel := context.WithCancel(context.WithValue(ctx, stateKey{}, &callState{op: opGetPayment}))
	cancel()
	got, err := c.checkRetry(cancelled, nil, transportErr)
	assert.False(t, got)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestCheckRetryRefusesLongRetryAfter(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, 200, `{}`, WithMaxRetries(DefaultMaxRetries))
	now := time.Now().UTC().Truncate(time.Second) // the context deadline below is real time
	c.now = func() time.Time { return now }
	base := context.WithValue(ctx, stateKey{}, &callState{op: opGetPayment, attempts: 1})
	retry := func(ctx context.Context, ra string) bool {
		ok, err := c.checkRetry(ctx, response(503, ``, "Retry-After", ra), nil)
		require.NoError(t, err)
		return ok
	}
	assert.True(t, retry(base, "60"))
	assert.False(t, retry(base, "61"), "over a minute is answered at once")
	assert.False(t, retry(base, now.Add(2*time.Minute).Format(http.TimeFormat)))
	assert.True(t, retry(base, now.Add(30*time.Second).Format(http.TimeFormat)))
	short, cancel := context.WithDeadline(base, now.Add(5*time.Second))
	defer cancel()
	assert.False(t, retry(short, "10"), "more than the context has left")
	assert.True(t, retry(short, "2"))
}

func TestBackoffBoundsAndRetryAfter(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, 200, `{}`)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	minW, maxW := 200*time.Millisecond, 5*time.Second
	c.http.RetryWaitMin, c.http.RetryWaitMax = minW, maxW
	backoff := func(attempt int, resp *http.Response) time.Duration {
		w, ok := c.backoff(attempt, resp)
		require.True(t, ok)
		return w
	}
	for attempt := range 40 {
		ceil := maxW
		if attempt < 5 {
			ceil = minW << attempt
		}
		for range 50 {
			w := backoff(attempt+1, nil)
			require.GreaterOrEqual(t, w, minW, "attempt %d", attempt)
			require.LessOrEqual(t, w, ceil, "attempt %d", attempt)
		}
	}
	assert.Equal(t, 7*time.Second, backoff(1, response(503, ``, "Retry-After", "7")),
		"Retry-After lengthens the wait even past the maximum")
	assert.Equal(t, 3*time.Second, backoff(1, response(429, ``, "Retry-After", now.Add(3*time.Second).Format(http.TimeFormat))))
	w := backoff(1, response(503, ``, "Retry-After", "garbage"))
	assert.LessOrEqual(t, w, minW)
	for _, header := range []string{"61", "99999999999999999999", "3600"} {
		_, ok := c.backoff(1, response(503, ``, "Retry-After", header))
		assert.False(t, ok, "Retry-After %s is too long to wait: answered at once", header)
	}
	c.http.RetryWaitMin, c.http.RetryWaitMax = time.Second, time.Second
	assert.Equal(t, time.Second, backoff(4, nil))
}

func TestRetryAfterParsing(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", 0, false}, {"0", 0, true}, {"1", time.Second, true}, {"-5", 0, false}, {"soon", 0, false},
		{"99999999999", 24 * time.Hour, true},
		{"99999999999999999999", 24 * time.Hour, true}, // overflows int64: still a very long wait
		{"-99999999999999999999", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	} {
		got, ok := retryAfter(response(503, ``, "Retry-After", tc.header), now)
		assert.Equal(t, tc.ok, ok, tc.header)
		assert.Equal(t, tc.want, got, tc.header)
	}
}
