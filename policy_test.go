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
		assert.Equal(t, class == classMoneyMove, op.advice != "", op.name)
		assert.Equal(t, class == classCreate || class == classStateChange, op.settle != nil, op.name)
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

func TestRetryableByClass(t *testing.T) {
	t.Parallel()
	transportErr := errors.New("connection reset by peer")
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name    string
		op      *operation
		preSend bool
		status  int
		body    string
		err     error
		want    bool
	}{
		{"read: transport error", opGetPayment, false, 0, ``, transportErr, true},
		{"read: 500", opGetPayment, false, 500, `{"error":"PAY_001"}`, nil, true},
		{"read: 502 html", opListBanks, false, 502, `<html>`, nil, true},
		{"read: 501", opListBanks, false, 501, ``, nil, false},
		{"read: bare 429", opGetBalance, false, 429, `slow down`, nil, true},
		{"read: 429 with an API code", opGetBalance, false, 429, `{"error":"PAY_005"}`, nil, false},
		{"read: 404", opGetPayment, false, 404, `{"error":"PAY_006"}`, nil, false},
		{"read: 200", opGetPayment, false, 200, `{}`, nil, false},
		{"create: transport error", opCreatePayment, false, 0, ``, transportErr, true},
		{"create: 500 PAY_001", opCreatePayment, false, 500, `{"error":"PAY_001"}`, nil, true},
		{"create: 503 PAY_004 is business", opCreatePayment, false, 503, `{"error":"PAY_004"}`, nil, false},
		{"create: 503 bare", opCreatePayment, false, 503, ``, nil, true},
		{"create: 429 PAY_005", opCreatePayment, false, 429, `{"error":"PAY_005"}`, nil, false},
		{"create: bare 429 not retried", opCreatePayout, false, 429, ``, nil, false},
		{"create: 409 PAY_003", opCreatePayout, false, 409, `{"error":"PAY_003"}`, nil, false},
		{"create: SYS_001", opCreatePayout, false, 500, `{"error":"SYS_001"}`, nil, true},
		{"state: transport error", opConfirmPayment, false, 0, ``, transportErr, true},
		{"state: 500", opCancelDispute, false, 500, `{"error":"SYS_001"}`, nil, true},
		{"state: 400", opCancelPayment, false, 400, `{"error":"PAY_007"}`, nil, false},
		{"money: dial failed", opCreateTransfer, true, 0, ``, dialErr, true},
		{"money: unexplained error (a custom transport)", opCreateTransfer, false, 0, ``, transportErr, false},
		{"money: dial error after a connection was obtained", opCreateWithdrawal, false, 0, ``, dialErr, false},
		{"money: 500", opCreateWithdrawal, false, 500, ``, nil, false},
		{"money: 503", opCreateTransfer, false, 503, ``, nil, false},
		{"money: 400", opCreateWithdrawal, false, 400, `{"error":"WDR_002"}`, nil, false},
		{"Do POST: 500", doOperation("POST", "/v1/x"), false, 500, ``, nil, false},
		{"Do GET: 500", doOperation("GET", "/v1/x"), false, 500, ``, nil, true},
		{"any: untrusted certificate", opGetPayment, true, 0, ``, x509.UnknownAuthorityError{}, false},
		{"any: 2xx over the cap", opGetPayment, false, 200, ``, nil, false},
	}
	for _, tc := range cases {
		a := &attempt{n: 1, status: tc.status, body: []byte(tc.body), err: tc.err, preSend: tc.preSend}
		if tc.status >= 400 {
			a.code = apiCode(a.body)
		}
		got, why := retryable(tc.op, a)
		assert.Equal(t, tc.want, got, tc.name)
		assert.NotEmpty(t, why, tc.name)
	}
}

// callCtx is a context carrying a call of op whose one attempt got status
// with header.
func callCtx(op *operation, status int, header ...string) context.Context {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return context.WithValue(ctx, callKey{}, &call{op: op, log: []attempt{{n: 1, status: status, header: h}}})
}

func TestBackoffBoundsAndRetryAfter(t *testing.T) {
	t.Parallel()
	minW, maxW := 200*time.Millisecond, 5*time.Second
	for n := range 40 {
		ceil := maxW
		if n < 5 {
			ceil = minW << n
		}
		assert.Equal(t, ceil, backoffCeil(minW, maxW, n+1), "retry %d", n)
		for range 50 {
			w := backoff(minW, maxW, n, nil)
			require.GreaterOrEqual(t, w, minW, "retry %d", n)
			require.LessOrEqual(t, w, ceil, "retry %d", n)
		}
	}
	assert.Equal(t, 7*time.Second, backoff(minW, maxW, 0, response(503, ``, "Retry-After", "7")),
		"Retry-After lengthens the wait even past the maximum")
	w := backoff(minW, maxW, 0, response(503, ``, "Retry-After", "garbage"))
	assert.LessOrEqual(t, w, minW)
	assert.Equal(t, time.Second, backoff(time.Second, time.Second, 3, nil))
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
		{"Fri, 31 Dec 9999 23:59:59 GMT", 24 * time.Hour, true}, // the date form is capped too
		{"Mon, 01 Jan 0001 00:00:00 GMT", 0, true},
	} {
		got, ok := retryAfter(response(503, ``, "Retry-After", tc.header).Header, now)
		assert.Equal(t, tc.ok, ok, tc.header)
		assert.Equal(t, tc.want, got, tc.header)
	}
}
