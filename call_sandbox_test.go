package paykit_test

// Tests of the call path (call.go) against the sandbox and against
// mangling proxies in front of it: lost and unreadable answers, retries
// that never lose or duplicate money, reconciliation, redaction.

// Tests of the money-safety edges an adversarial review found (issue
// "Money safety and secrecy at the edges"): answers that cannot be read,
// retries that run out after the work was done, transports that say
// nothing, results that are not what was asked for.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// Point 1: a money move that was applied but whose answer cannot be read
// is an unknown outcome, sent once; a create or state change is read back;
// a read stays an error.
func TestUnreadableAnswers(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"truncated", "empty", "204", "html"} {
		t.Run("transfer "+mode, func(t *testing.T) {
			t.Parallel()
			sb := sandbox.New(sandbox.Config{})
			t.Cleanup(sb.Close)
			c := sandboxClient(t, mangle(t, sb, http.MethodPost, "/v1/transfers", mode).URL)
			_, err := c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "term_sandbox_main",
				ToTerminalID: "term_sandbox_reserve", Amount: dec("10.00")})
			require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
			assert.Contains(t, err.Error(), "ListTerminals")
			assert.Equal(t, 1, sb.RequestCount(http.MethodPost, "/v1/transfers"), "sent once")
			assertDec(t, "990.00", sbTerminalBalance(t, sb, "term_sandbox_main"), "the transfer was applied once")
		})
		t.Run("withdrawal "+mode, func(t *testing.T) {
			t.Parallel()
			sb := sandbox.New(sandbox.Config{})
			t.Cleanup(sb.Close)
			c := sandboxClient(t, mangle(t, sb, http.MethodPost, "/v1/withdrawals", mode).URL)
			_, err := c.CreateWithdrawal(bg, paykit.CreateWithdrawalParams{TerminalID: "term_sandbox_main",
				Amount: dec("100"), Address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"})
			require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
			assert.Equal(t, 1, sb.RequestCount(http.MethodPost, "/v1/withdrawals"), "sent once")
		})
		t.Run("create payment "+mode, func(t *testing.T) {
			t.Parallel()
			sb := sandbox.New(sandbox.Config{})
			t.Cleanup(sb.Close)
			c := sandboxClient(t, mangle(t, sb, http.MethodPost, "/v1/payments", mode).URL)
			p, err := c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "o-" + mode, Amount: dec("1500.50"), Bank: "sber"})
			require.NoError(t, err, "the 2xx said it was created: read back by ext_id")
			assert.True(t, p.Reconciled)
			assert.Equal(t, "o-"+mode, p.ExtID)
			assertDec(t, "1500.50", p.Amount, "amount")
			assert.Equal(t, "Sberbank", p.Requisites.BankName)
			assert.Equal(t, 1, sb.RequestCount(http.MethodPost, "/v1/payments"))
			assert.Equal(t, 1, sb.Stats(sandbox.DefaultAPIKey).Payments)
		})
		t.Run("cancel "+mode, func(t *testing.T) {
			t.Parallel()
			sb := sandbox.New(sandbox.Config{})
			t.Cleanup(sb.Close)
			direct := httptest.NewServer(sb)
			t.Cleanup(direct.Close)
			p, err := sandboxClient(t, direct.URL).CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "c-" + mode, Amount: dec("500")})
			require.NoError(t, err)
			c := sandboxClient(t, mangle(t, sb, http.MethodPost, "/v1/payments/"+p.ID+"/cancel", mode).URL)
			got, err := c.CancelPayment(bg, p.ID)
			require.NoError(t, err)
			assert.True(t, got.Reconciled)
			assert.Equal(t, paykit.PaymentStatusCancelled, got.Status)
		})
	}
	t.Run("read", func(t *testing.T) {
		t.Parallel()
		sb := sandbox.New(sandbox.Config{})
		t.Cleanup(sb.Close)
		c := sandboxClient(t, mangle(t, sb, http.MethodGet, "/v1/balance", "empty").URL)
		_, err := c.GetBalance(bg)
		require.Error(t, err)
		assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome, "a read changes nothing")
		assert.Contains(t, err.Error(), "no resource")
	})
}

// Point 2: a create or state change applied, then answered only with
// errors until the retries ran out, says its outcome is unknown, keeps
// its cause and names the read that settles it.
func TestAppliedThenRetriesRanOut(t *testing.T) {
	t.Parallel()
	faults := func(sb *sandbox.Server, path string) {
		require.NoError(t, sb.InjectFault(sandbox.Fault{Method: "POST", Path: path, Mode: sandbox.FaultDropAfter, Count: 1}))
		require.NoError(t, sb.InjectFault(sandbox.Fault{Method: "POST", Path: path, Mode: sandbox.FaultErrorBefore,
			Count: 3, Status: 500, Code: "SYS_001"}))
	}
	t.Run("payout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		faults(e.sb, "/v1/payouts")
		params := paykit.CreatePayoutParams{ExtID: "po-lost", Amount: dec("1000"), Method: paykit.PayoutMethodCard,
			Requisites: "2200123456789010", HolderName: "Ivan Petrov"}
		_, err := e.c.CreatePayout(bg, params)
		require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
		require.ErrorIs(t, err, paykit.ErrInternal, "the typed cause is kept")
		var apiErr *paykit.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "SYS_001", apiErr.Code)
		assert.Contains(t, err.Error(), `GetPayoutByExtID("po-lost")`)
		assert.Equal(t, 4, e.sb.RequestCount(http.MethodPost, "/v1/payouts"))
		assert.Equal(t, 1, e.sb.Stats(sandbox.DefaultAPIKey).Payouts, "the first attempt created it")

		// What the docs tell the merchant to do: read back before creating again.
		got, err := e.c.GetPayoutByExtID(bg, "po-lost")
		require.NoError(t, err)
		assertDec(t, "1000", got.Amount, "amount")
		// And a plain identical call now is a genuine duplicate of it, on a first attempt.
		_, err = e.c.CreatePayout(bg, params)
		requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
		assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome, "a PAY_003 on a first attempt is definite")
	})
	t.Run("payment", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		faults(e.sb, "/v1/payments")
		_, err := e.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "o-lost", Amount: dec("700")})
		require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
		require.ErrorIs(t, err, paykit.ErrInternal)
		assert.Contains(t, err.Error(), `GetPaymentByExtID("o-lost")`)
	})
	t.Run("confirm", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.pay(t, "o-confirm", "800")
		faults(e.sb, "/v1/payments/{id}/confirm")
		_, err := e.c.ConfirmPayment(bg, p.ID, nil)
		require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
		require.ErrorIs(t, err, paykit.ErrInternal)
		assert.Contains(t, err.Error(), `GetPayment("`+p.ID+`")`)
		assert.Equal(t, paykit.PaymentStatusProcessing, e.status(t, p.ID), "the first attempt confirmed it")
	})
	t.Run("a business refusal after a lost attempt", func(t *testing.T) {
		// The first attempt created a payment and its answer was lost; the
		// retry is refused with PAY_005, because of that very payment.
		t.Parallel()
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":"PAY_005","message":"too many","data":{}}`)
		}))
		t.Cleanup(srv.Close)
		_, err := sandboxClient(t, srv.URL).CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "o-5", Amount: dec("999")})
		require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
		require.ErrorIs(t, err, paykit.ErrTooManySameAmount)
		assert.Equal(t, int32(2), n.Load())
	})
}

// Point 3: a money move is re-sent only on errors positively identified
// as happening before sending.
func TestMoneyMoveResentOnlyOnProvenPreSend(t *testing.T) {
	t.Parallel()
	t.Run("silent transport that read the body", func(t *testing.T) {
		t.Parallel()
		sb := sandbox.New(sandbox.Config{})
		t.Cleanup(sb.Close)
		srv := httptest.NewServer(sb)
		t.Cleanup(srv.Close)
		tr := &bareTransport{inner: &http.Transport{}, after: func(resp *http.Response, err error) (*http.Response, error) {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, io.ErrUnexpectedEOF
		}}
		c := sandboxClient(t, srv.URL, paykit.WithHTTPClient(&http.Client{Transport: tr}))
		_, err := c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "term_sandbox_main",
			ToTerminalID: "term_sandbox_reserve", Amount: dec("1")})
		require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.Equal(t, 1, sb.RequestCount(http.MethodPost, "/v1/transfers"), "never re-sent without proof")
	})
	t.Run("dial refused is proof", func(t *testing.T) {
		t.Parallel()
		sb := sandbox.New(sandbox.Config{})
		t.Cleanup(sb.Close)
		srv := httptest.NewServer(sb)
		t.Cleanup(srv.Close)
		var dials atomic.Int32
		d := &net.Dialer{}
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
			}
			return d.DialContext(ctx, network, addr)
		}}
		c := sandboxClient(t, srv.URL, paykit.WithHTTPClient(&http.Client{Transport: tr}))
		tr2, err := c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "term_sandbox_main",
			ToTerminalID: "term_sandbox_reserve", Amount: dec("1")})
		require.NoError(t, err)
		assert.True(t, tr2.Success)
		assert.Equal(t, 1, sb.RequestCount(http.MethodPost, "/v1/transfers"))
	})
	t.Run("context ended before a connection", func(t *testing.T) {
		t.Parallel()
		tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			<-ctx.Done() // a dial that never completes
			return nil, ctx.Err()
		}}
		c := sandboxClient(t, "http://127.0.0.1:9", paykit.WithHTTPClient(&http.Client{Transport: tr}))
		ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
		defer cancel()
		_, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome, "nothing was sent: a plain context error")
	})
}

// Point 4: success false is not a success.
func TestTransferSuccessFalse(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"success":false,"from_terminal_id":"a","to_terminal_id":"b","amount":5,"currency":"USDT"}`)
	}))
	t.Cleanup(srv.Close)
	c := sandboxClient(t, srv.URL)
	tr, err := c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("5")})
	assert.Nil(t, tr)
	require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
	assert.Contains(t, err.Error(), "success")
	assert.Contains(t, err.Error(), "ListTerminals")
}

// Point 5: reconciliation compares every field the read-back carries.
func TestReconcileComparesEverything(t *testing.T) {
	t.Parallel()
	lost := func(e *itEnv, path string) {
		require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: path, Mode: sandbox.FaultDropAfter, Count: 1}))
	}
	t.Run("cross-border bank differs", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		_, err := e.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "cb-1", Amount: dec("5000"),
			Method: paykit.MethodCrossBorder, Bank: "kaspi", Country: paykit.CountryKZ})
		require.NoError(t, err)
		lost(e, "/v1/payments")
		_, err = e.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "cb-1", Amount: dec("5000"),
			Method: paykit.MethodCrossBorder, Bank: "eskhata", Country: paykit.CountryTJ})
		requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
	})
	t.Run("domestic bank differs (name resolved from the code)", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		_, err := e.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "d-1", Amount: dec("5000"), Bank: "tinkoff"})
		require.NoError(t, err)
		lost(e, "/v1/payments")
		_, err = e.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "d-1", Amount: dec("5000"), Bank: "sber"})
		requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
	})
	t.Run("domestic bank matches: reconciled", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		lost(e, "/v1/payments")
		p, err := e.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "d-2", Amount: dec("5000"), Bank: "sber"})
		require.NoError(t, err)
		assert.True(t, p.Reconciled, "the caller can tell")
		assert.Equal(t, "Sberbank", p.Requisites.BankName)
		assert.Equal(t, 1, e.sb.Stats(sandbox.DefaultAPIKey).Payments)
	})
	t.Run("payout holder differs", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		params := paykit.CreatePayoutParams{ExtID: "po-h", Amount: dec("1000"), Method: paykit.PayoutMethodSBP,
			Requisites: "+79001234567", HolderName: "Ivan Petrov", Bank: "sber"}
		_, err := e.c.CreatePayout(bg, params)
		require.NoError(t, err)
		lost(e, "/v1/payouts")
		other := params
		other.HolderName = "Petr Ivanov"
		_, err = e.c.CreatePayout(bg, other)
		requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
		lost(e, "/v1/payouts")
		other = params
		other.Bank = "tinkoff"
		_, err = e.c.CreatePayout(bg, other)
		requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
	})
}

// Point 7: a Retry-After too large for any integer, or a date in year
// 9999, is a refusal answered at once, not a retry at once.
func TestRetryAfterOverflowNotRetried(t *testing.T) {
	t.Parallel()
	for _, header := range []string{"99999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"} {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.Header().Set("Retry-After", header)
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		t.Cleanup(srv.Close)
		_, err := sandboxClient(t, srv.URL).GetBalance(bg)
		require.ErrorIs(t, err, paykit.ErrInternal, header)
		assert.Equal(t, int32(1), n.Load(), header)
	}
}

// Issue 16, point 9: a signer that fails on a retry keeps what the
// earlier attempt said.
func TestSignerFailingOnRetryKeepsEarlierAnswer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"PAY_001","message":"internal","data":{}}`)
	}))
	t.Cleanup(srv.Close)
	var calls atomic.Int32
	signer := paykit.SignerFunc(func(*http.Request, []byte) (string, error) {
		if calls.Add(1) > 1 {
			return "", errors.New("HSM unavailable")
		}
		return "sig", nil
	})
	c, err := paykit.NewClient(srv.URL, "pk", signer, paykit.WithRetryWait(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	_, err = c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "s-1", Amount: dec("500")})
	require.ErrorIs(t, err, paykit.ErrInternal, "what the 500 means is kept")
	require.ErrorIs(t, err, paykit.ErrUnknownOutcome, "the 500 may have created it")
	assert.Contains(t, err.Error(), "HSM unavailable")
	assert.Equal(t, 1, strings.Count(err.Error(), "paykit: CreatePayment:"), err.Error())

	calls.Store(0)
	_, err = c.GetBalance(bg)
	require.ErrorIs(t, err, paykit.ErrInternal)
	assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome)
	assert.Contains(t, err.Error(), "HSM unavailable")
}

// Issue 16, point 8: a backoff that cannot fit in the deadline is not
// slept; the answer in hand is returned, typed.
func TestBackoffPastDeadlineReturnsAnswer(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	c, err := paykit.NewClient(srv.URL, "pk", paykit.HMACSigner("s"), paykit.WithRetryWait(2*time.Second, 5*time.Second))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	_, err = c.GetBalance(ctx)
	require.ErrorIs(t, err, paykit.ErrInternal)
	assert.NotErrorIs(t, err, context.DeadlineExceeded, "the 503 is returned, not a wait until the deadline")
	assert.NoError(t, ctx.Err(), "returned before the deadline")
	assert.Equal(t, int32(1), n.Load())
}

// Issue 16, point 2: a RoundTripper's odd answers never panic.
func TestOddTransportAnswers(t *testing.T) {
	t.Parallel()
	rt := func(f func() (*http.Response, error)) *http.Client {
		return &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return f() })}
	}
	nilBody := rt(func() (*http.Response, error) { return &http.Response{StatusCode: 200, Header: http.Header{}}, nil })
	c := sandboxClient(t, "https://api.example", paykit.WithHTTPClient(nilBody))
	_, err := c.GetBalance(bg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no resource", "a nil body is an empty one")
	_, err = c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
	require.ErrorIs(t, err, paykit.ErrUnknownOutcome)

	nilNil := rt(func() (*http.Response, error) { return nil, nil })
	c = sandboxClient(t, "https://api.example", paykit.WithHTTPClient(nilNil))
	_, err = c.GetBalance(bg)
	require.Error(t, err)
	_, err = c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
	require.ErrorIs(t, err, paykit.ErrUnknownOutcome, "a transport error on a money move")
}

// Issue 16, point 7: a read must answer the resource it named.
func TestReadsRefuseAnotherResource(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	a := e.pay(t, "o-a", "300000")
	b := e.pay(t, "o-b", "150")
	// A cache that answers b for any payment.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = strings.Replace(strings.Replace(r.URL.Path, a.ID, b.ID, 1), "o-a", "o-b", 1)
		r.URL.RawPath = ""
		r.RequestURI = r.URL.RequestURI()
		rec := httptest.NewRecorder()
		// Re-sign for the rewritten URI so the sandbox accepts it.
		sig, _ := paykit.HMACSigner(sandbox.DefaultSecret).Sign(r, nil)
		r.Header.Set("X-Signature", sig)
		e.sb.ServeHTTP(rec, r)
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	c := sandboxClient(t, srv.URL)
	_, err := c.GetPayment(bg, a.ID)
	require.Error(t, err)
	assert.Contains(t, err.Error(), b.ID)
	_, err = c.GetPaymentByExtID(bg, "o-a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"o-b"`)
}

// Point 8: a server echoing the API key does not put it in an error.
func TestEchoedAPIKeyRedacted(t *testing.T) {
	t.Parallel()
	const key = "pk_live_9f8e7d6c5b4a"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"AUTH_001","message":"unknown API key `+key+`","data":{"key":"`+key+`"}}`)
	}))
	t.Cleanup(srv.Close)
	c, err := paykit.NewClient(srv.URL, key, paykit.HMACSigner("s"))
	require.NoError(t, err)
	_, err = c.GetBalance(bg)
	require.ErrorIs(t, err, paykit.ErrUnauthorized)
	var apiErr *paykit.Error
	require.ErrorAs(t, err, &apiErr)
	for _, text := range []string{err.Error(), fmt.Sprintf("%v %+v %#v %s", err, apiErr, apiErr, apiErr), string(apiErr.Data), apiErr.Message} {
		assert.NotContains(t, text, key)
	}
	assert.Contains(t, apiErr.Message, "[api key]")
}

// retryRig is a sandbox on a real loopback server with fault injection, a
// client with fast backoff, a debug log that every scenario writes into,
// and a record of every signature the client produced, so that the last
// check can prove none of them reached the log.
type retryRig struct {
	sb   *sandbox.Server
	srv  *httptest.Server
	c    *paykit.Client
	logs *paykit.TestLog
	sigs *sigRecorder
}

type sigRecorder struct {
	mu   sync.Mutex
	sigs []string
}

func (r *sigRecorder) signer() paykit.Signer {
	inner := paykit.HMACSigner(sandbox.DefaultSecret)
	return paykit.SignerFunc(func(req *http.Request, body []byte) (string, error) {
		s, err := inner.Sign(req, body)
		r.mu.Lock()
		r.sigs = append(r.sigs, s)
		r.mu.Unlock()
		return s, err
	})
}

func newRetryRig(t *testing.T, logs *paykit.TestLog, sigs *sigRecorder, cfg sandbox.Config, opts ...paykit.Option) *retryRig {
	t.Helper()
	sb := sandbox.New(cfg)
	t.Cleanup(sb.Close)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	opts = append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 5*time.Millisecond), paykit.WithLogger(logs.Logger())}, opts...)
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, sigs.signer(), opts...)
	require.NoError(t, err)
	return &retryRig{sb: sb, srv: srv, c: c, logs: logs, sigs: sigs}
}

func (r *retryRig) fault(t *testing.T, method, path, mode string) {
	t.Helper()
	require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: method, Path: path, Mode: mode, Count: 1}))
}

func (r *retryRig) stats() sandbox.Stats { return r.sb.Stats(sandbox.DefaultAPIKey) }

func (r *retryRig) balances(t *testing.T) map[string]decimal.Decimal {
	t.Helper()
	out := map[string]decimal.Decimal{}
	for _, term := range r.sb.Terminals(sandbox.DefaultAPIKey) {
		out[term.ID] = term.Balance
		out[term.ID+"/frozen"] = term.BalanceFrozen
	}
	return out
}

var bg = context.Background()

// TestRetriesNeverLoseOrDuplicateMoney runs every scenario of the retry
// classes against the sandbox, asserting both what the SDK returned and
// what the server recorded, then checks the log they all wrote.
func TestRetriesNeverLoseOrDuplicateMoney(t *testing.T) {
	logs, sigs := &paykit.TestLog{}, &sigRecorder{}
	rig := func(t *testing.T, opts ...paykit.Option) *retryRig {
		return newRetryRig(t, logs, sigs, sandbox.Config{}, opts...)
	}
	const card = "4111111111111111"

	t.Run("create payment, first response lost", func(t *testing.T) {
		r := rig(t)
		r.fault(t, "POST", "/v1/payments", sandbox.FaultDropAfter)
		p, err := r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "lost-1", Amount: decimal.RequireFromString("1500.50")})
		require.NoError(t, err)
		assert.Equal(t, 1, r.stats().Payments, "exactly one payment exists")
		assert.Equal(t, 2, r.sb.RequestCount("POST", "/v1/payments"))
		stored, err := r.c.GetPaymentByExtID(bg, "lost-1")
		require.NoError(t, err)
		assert.Equal(t, stored.ID, p.ID, "the SDK returns the payment the first attempt created")
		assert.Equal(t, paykit.PaymentStatusPending, p.Status)
		assert.Equal(t, "1500.5", p.Amount.String())
	})

	t.Run("create payout, first response lost", func(t *testing.T) {
		r := rig(t)
		r.fault(t, "POST", "/v1/payouts", sandbox.FaultDropAfter)
		p, err := r.c.CreatePayout(bg, paykit.CreatePayoutParams{ExtID: "po-lost", Amount: decimal.RequireFromString("2500.00"),
			Method: paykit.PayoutMethodCard, Requisites: card, HolderName: "IVAN IVANOV"})
		require.NoError(t, err)
		assert.Equal(t, 1, r.stats().Payouts, "exactly one payout exists")
		assert.Equal(t, 2, r.sb.RequestCount("POST", "/v1/payouts"))
		stored, err := r.c.GetPayoutByExtID(bg, "po-lost")
		require.NoError(t, err)
		assert.Equal(t, stored.ID, p.ID)
		assert.Equal(t, paykit.PayoutStatusPending, p.Status)
	})

	t.Run("create payment, retry meets another payment under the ext_id", func(t *testing.T) {
		r := rig(t)
		_, err := r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "taken", Amount: decimal.RequireFromString("500")})
		require.NoError(t, err)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payments", Mode: sandbox.FaultErrorBefore, Status: 503}))
		_, err = r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "taken", Amount: decimal.RequireFromString("700")})
		require.ErrorIs(t, err, paykit.ErrDuplicateExtID)
		var apiErr *paykit.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "taken", apiErr.ExtID())
		assert.Equal(t, 1, r.stats().Payments)
		assert.Equal(t, 3, r.sb.RequestCount("POST", "/v1/payments"))
	})

	t.Run("create payout, retry meets another payout under the ext_id", func(t *testing.T) {
		r := rig(t)
		params := paykit.CreatePayoutParams{ExtID: "po-taken", Amount: decimal.RequireFromString("100"),
			Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "P. P."}
		_, err := r.c.CreatePayout(bg, params)
		require.NoError(t, err)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payouts", Mode: sandbox.FaultErrorBefore, Status: 500}))
		params.Amount = decimal.RequireFromString("100.01")
		_, err = r.c.CreatePayout(bg, params)
		require.ErrorIs(t, err, paykit.ErrDuplicateExtID)
		assert.Equal(t, 1, r.stats().Payouts)
	})

	t.Run("a first-attempt PAY_003 is a genuine duplicate", func(t *testing.T) {
		r := rig(t)
		params := paykit.CreatePaymentParams{ExtID: "dup", Amount: decimal.RequireFromString("300")}
		_, err := r.c.CreatePayment(bg, params)
		require.NoError(t, err)
		_, err = r.c.CreatePayment(bg, params)
		require.ErrorIs(t, err, paykit.ErrDuplicateExtID, "same parameters, but no retry happened: not ours")
		assert.Equal(t, 2, r.sb.RequestCount("POST", "/v1/payments"))
	})

	stateChanges := []struct {
		name, path string
		prepare    func(t *testing.T, r *retryRig, id string)
		call       func(c *paykit.Client, id string) (*paykit.Payment, error)
		want       paykit.PaymentStatus
	}{
		{"confirm", "/v1/payments/{id}/confirm", nil,
			func(c *paykit.Client, id string) (*paykit.Payment, error) { return c.ConfirmPayment(bg, id, nil) },
			paykit.PaymentStatusProcessing},
		{"cancel", "/v1/payments/{id}/cancel", nil,
			func(c *paykit.Client, id string) (*paykit.Payment, error) { return c.CancelPayment(bg, id) },
			paykit.PaymentStatusCancelled},
		{"open dispute", "/v1/payments/{id}/dispute", func(t *testing.T, r *retryRig, id string) {
			_, err := r.c.CancelPayment(bg, id)
			require.NoError(t, err)
		}, func(c *paykit.Client, id string) (*paykit.Payment, error) {
			return c.OpenDispute(bg, id, paykit.OpenDisputeParams{Comment: "paid"})
		}, paykit.PaymentStatusDispute},
		{"cancel dispute", "/v1/payments/{id}/dispute/cancel", func(t *testing.T, r *retryRig, id string) {
			_, err := r.c.CancelPayment(bg, id)
			require.NoError(t, err)
			_, err = r.c.OpenDispute(bg, id, paykit.OpenDisputeParams{})
			require.NoError(t, err)
		}, func(c *paykit.Client, id string) (*paykit.Payment, error) { return c.CancelDispute(bg, id) },
			paykit.PaymentStatusCancelledAppeal},
	}
	for _, sc := range stateChanges {
		t.Run(sc.name+", first response lost", func(t *testing.T) {
			r := rig(t)
			p, err := r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "sc-" + sc.name, Amount: decimal.RequireFromString("1000")})
			require.NoError(t, err)
			if sc.prepare != nil {
				sc.prepare(t, r, p.ID)
			}
			r.fault(t, "POST", sc.path, sandbox.FaultDropAfter)
			got, err := sc.call(r.c, p.ID)
			require.NoError(t, err, "the retry's wrong-state answer is reconciled")
			assert.Equal(t, sc.want, got.Status)
			assert.Equal(t, p.ID, got.ID)
			assert.Equal(t, 2, r.sb.RequestCount("POST", sc.path))
			stored, err := r.c.GetPayment(bg, p.ID)
			require.NoError(t, err)
			assert.Equal(t, sc.want, stored.Status)
		})
	}

	// The 502 may have confirmed it and a review cancelled it since: the
	// SDK cannot know, and PAY_008 on the retry is not a refusal of this
	// call's confirmation.
	t.Run("confirm retry finds the payment cancelled: unknown, not a refusal", func(t *testing.T) {
		r := rig(t)
		p, err := r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "sc-x", Amount: decimal.RequireFromString("1000")})
		require.NoError(t, err)
		_, err = r.c.CancelPayment(bg, p.ID)
		require.NoError(t, err)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payments/{id}/confirm", Mode: sandbox.FaultErrorBefore, Status: 502}))
		_, err = r.c.ConfirmPayment(bg, p.ID, nil)
		require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
		assert.NotErrorIs(t, err, paykit.ErrPaymentNotConfirmable)
		assert.ErrorContains(t, err, "PAY_008 (HTTP 400)")
		assert.ErrorContains(t, err, fmt.Sprintf("GetPayment(%q)", p.ID))
	})

	moneyMoves := []struct {
		name, path string
		call       func(c *paykit.Client) error
		applied    func(s sandbox.Stats) int
	}{
		{"transfer", "/v1/transfers", func(c *paykit.Client) error {
			_, err := c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
				ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: decimal.RequireFromString("10.25")})
			return err
		}, func(s sandbox.Stats) int { return s.Transfers }},
		{"withdrawal", "/v1/withdrawals", func(c *paykit.Client) error {
			_, err := c.CreateWithdrawal(bg, paykit.CreateWithdrawalParams{TerminalID: sandbox.DefaultMainTerminalID,
				Amount: decimal.RequireFromString("20"), Address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"})
			return err
		}, func(s sandbox.Stats) int { return s.Withdrawals }},
	}
	for _, mm := range moneyMoves {
		t.Run(mm.name+", first response lost", func(t *testing.T) {
			r := rig(t)
			r.fault(t, "POST", mm.path, sandbox.FaultDropAfter)
			err := mm.call(r.c)
			require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
			assert.Contains(t, err.Error(), "not re-sent")
			assert.Equal(t, 1, mm.applied(r.stats()), "the server applied exactly one")
			assert.Equal(t, 1, r.sb.RequestCount("POST", mm.path), "never re-sent")
		})
		t.Run(mm.name+", 5xx answer", func(t *testing.T) {
			r := rig(t)
			require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "POST", Path: mm.path, Mode: sandbox.FaultErrorBefore, Status: 503}))
			err := mm.call(r.c)
			require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
			var apiErr *paykit.Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, 503, apiErr.HTTPStatus)
			assert.Equal(t, 1, r.sb.RequestCount("POST", mm.path))
			assert.Equal(t, 0, mm.applied(r.stats()))
		})
	}

	t.Run("transfer whose first dial fails is retried and applied once", func(t *testing.T) {
		var dials atomic.Int32
		dialer := &net.Dialer{}
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("connection refused")}
			}
			return dialer.DialContext(ctx, network, addr)
		}}
		r := rig(t, paykit.WithHTTPClient(&http.Client{Transport: tr}))
		before := r.balances(t)
		tx, err := r.c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
			ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: decimal.RequireFromString("10.25")})
		require.NoError(t, err)
		assert.True(t, tx.Success)
		assert.Equal(t, int32(2), dials.Load())
		assert.Equal(t, 1, r.stats().Transfers)
		assert.Equal(t, 1, r.sb.RequestCount("POST", "/v1/transfers"))
		after := r.balances(t)
		assert.True(t, before[sandbox.DefaultMainTerminalID].Sub(decimal.RequireFromString("10.25")).Equal(after[sandbox.DefaultMainTerminalID]))
		assert.True(t, before[sandbox.DefaultReserveTerminalID].Add(decimal.RequireFromString("10.25")).Equal(after[sandbox.DefaultReserveTerminalID]))
	})

	t.Run("business errors are sent once", func(t *testing.T) {
		r := newRetryRig(t, logs, sigs, sandbox.Config{MaxSamePendingAmount: 1})
		_, err := r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "nr", Amount: decimal.RequireFromString("1000"), Bank: "gazprom"})
		require.ErrorIs(t, err, paykit.ErrNoRequisites)
		assert.NotErrorIs(t, err, paykit.ErrInternal)
		assert.Equal(t, 1, r.sb.RequestCount("POST", "/v1/payments"), "PAY_004 (503) is not retried")

		_, err = r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "same-1", Amount: decimal.RequireFromString("1234")})
		require.NoError(t, err)
		_, err = r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "same-2", Amount: decimal.RequireFromString("1234")})
		require.ErrorIs(t, err, paykit.ErrTooManySameAmount)
		assert.Equal(t, 3, r.sb.RequestCount("POST", "/v1/payments"), "PAY_005 (429) is not retried")

		_, err = r.c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultReserveTerminalID,
			ToTerminalID: sandbox.DefaultMainTerminalID, Amount: decimal.RequireFromString("5000")})
		require.ErrorIs(t, err, paykit.ErrInsufficientFunds)
		assert.Equal(t, 1, r.sb.RequestCount("POST", "/v1/transfers"))
	})

	t.Run("reads retry 5xx until the answer comes", func(t *testing.T) {
		r := rig(t)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/terminals", Mode: sandbox.FaultErrorBefore, Status: 500, Count: 2}))
		r.fault(t, "GET", "/v1/balance", sandbox.FaultDropAfter)
		terms, err := r.c.ListTerminals(bg)
		require.NoError(t, err)
		assert.Len(t, terms, 2)
		assert.Equal(t, 3, r.sb.RequestCount("GET", "/v1/terminals"))
		_, err = r.c.GetBalance(bg)
		require.NoError(t, err)
		assert.Equal(t, 2, r.sb.RequestCount("GET", "/v1/balance"))
	})

	t.Run("retries are bounded by WithMaxRetries", func(t *testing.T) {
		r := rig(t, paykit.WithMaxRetries(2))
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/banks", Mode: sandbox.FaultErrorBefore, Status: 502, Count: 10}))
		_, err := r.c.ListBanks(bg)
		require.ErrorIs(t, err, paykit.ErrInternal)
		var apiErr *paykit.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 502, apiErr.HTTPStatus, "the last answer is decoded, not discarded")
		assert.Equal(t, "SYS_001", apiErr.Code)
		assert.Equal(t, 3, r.sb.RequestCount("GET", "/v1/banks"))
	})

	t.Run("Retry-After is honoured", func(t *testing.T) {
		r := rig(t)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/withdrawals/fee", Mode: sandbox.FaultRetryAfter, RetryAfterS: 1}))
		start := time.Now()
		fee, err := r.c.GetWithdrawalFee(bg)
		elapsed := time.Since(start)
		require.NoError(t, err)
		assert.Equal(t, "1.50", fee.Fee.StringFixed(2))
		// The client's own backoff here is at most 5 ms, so only the
		// header can explain a wait of a second; the upper bound is wide.
		assert.GreaterOrEqual(t, elapsed, time.Second)
		assert.Less(t, elapsed, 10*time.Second)
		assert.Equal(t, 2, r.sb.RequestCount("GET", "/v1/withdrawals/fee"))
	})

	t.Run("a Retry-After over a minute is answered at once", func(t *testing.T) {
		r := rig(t)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/balance", Mode: sandbox.FaultRetryAfter, RetryAfterS: 120}))
		_, err := r.c.GetBalance(bg)
		var apiErr *paykit.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 503, apiErr.HTTPStatus)
		assert.Equal(t, 1, r.sb.RequestCount("GET", "/v1/balance"))
	})

	t.Run("a Retry-After beyond the context deadline is answered at once", func(t *testing.T) {
		r := rig(t)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/balance", Mode: sandbox.FaultRetryAfter, RetryAfterS: 30}))
		ctx, cancel := context.WithTimeout(bg, 20*time.Second)
		defer cancel()
		_, err := r.c.GetBalance(ctx)
		require.ErrorIs(t, err, paykit.ErrInternal)
		assert.NoError(t, ctx.Err(), "returned long before the deadline")
		assert.Equal(t, 1, r.sb.RequestCount("GET", "/v1/balance"))
	})

	t.Run("a context cancelled during backoff ends the call at once", func(t *testing.T) {
		r := rig(t)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/balance", Mode: sandbox.FaultRetryAfter, RetryAfterS: 30}))
		ctx, cancel := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() {
			_, err := r.c.GetBalance(ctx)
			done <- err
		}()
		require.Eventually(t, func() bool { return r.sb.RequestCount("GET", "/v1/balance") == 1 }, 5*time.Second, time.Millisecond)
		cancelled := time.Now()
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the call did not end after its context was cancelled")
		}
		assert.Less(t, time.Since(cancelled), 100*time.Millisecond)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, r.sb.RequestCount("GET", "/v1/balance"))
	})

	t.Run("every attempt is signed afresh", func(t *testing.T) {
		var n atomic.Int32
		counting := paykit.SignerFunc(func(req *http.Request, body []byte) (string, error) {
			n.Add(1)
			return paykit.HMACSigner(sandbox.DefaultSecret).Sign(req, body)
		})
		sb := sandbox.New(sandbox.Config{})
		defer sb.Close()
		srv := httptest.NewServer(sb)
		defer srv.Close()
		c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, counting, paykit.WithRetryWait(time.Millisecond, time.Millisecond))
		require.NoError(t, err)
		require.NoError(t, sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/terminals", Mode: sandbox.FaultErrorBefore, Status: 500, Count: 2}))
		_, err = c.ListTerminals(bg)
		require.NoError(t, err)
		assert.Equal(t, int32(3), n.Load())
	})

	// The log of every scenario above: one line per attempt, and nothing
	// secret in it.
	out := logs.String()
	require.NotEmpty(t, out)
	assert.Greater(t, strings.Count(out, `"msg":"paykit: attempt"`), 40)
	for _, secret := range []string{sandbox.DefaultAPIKey, sandbox.DefaultSecret, card, "IVAN", "+79001234567", "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"} {
		assert.NotContains(t, out, secret)
	}
	sigs.mu.Lock()
	defer sigs.mu.Unlock()
	require.Greater(t, len(sigs.sigs), 40)
	for _, s := range sigs.sigs {
		if !assert.NotContains(t, out, s, "a signature reached the log") {
			break
		}
	}
}

// noResource lists 2xx answers that carry no resource the SDK can decode.
var noResource = []answer{
	{http.StatusOK, ``},
	{http.StatusOK, `null`},
	{http.StatusNoContent, ``},
	{http.StatusOK, `<html><body>OK</body></html>`},
	{http.StatusCreated, `{"id":"` + unsaidPaymentID + `","status":`},
}

// TestUnsaidSuccessStatusCodes: the spec shows no success status. Any 2xx
// is a success; a 2xx without a decodable resource is an error for reads,
// is settled by reading the resource back for creates and state changes,
// and is an unknown outcome for transfers and withdrawals.
func TestUnsaidSuccessStatusCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("any 2xx with a resource is a success", func(t *testing.T) {
		t.Parallel()
		for _, status := range []int{200, 201, 202, 203, 299} {
			c, log := fakeAPI(t, map[string]answer{
				"GET /v1/payments/" + unsaidPaymentID: {status, unsaidPaymentJSON("PENDING")},
				"POST /v1/payouts":                    {status, unsaidPayoutJSON("pending")},
			})
			p, err := c.GetPayment(ctx, unsaidPaymentID)
			require.NoError(t, err, "HTTP %d", status)
			assert.Equal(t, unsaidPaymentID, p.ID)
			assert.Equal(t, paykit.PaymentStatusPending, p.Status)
			po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "payout-1", Amount: dec("2500.00"),
				Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "IVAN IVANOV"})
			require.NoError(t, err, "HTTP %d", status)
			assert.Equal(t, unsaidPayoutID, po.ID)
			assert.False(t, po.Reconciled, "its own answer, not a read-back")
			assert.Len(t, log.all(), 2, "HTTP %d: no retry, no read-back", status)
		}
	})

	t.Run("reads: a 2xx without a resource is an error", func(t *testing.T) {
		t.Parallel()
		for _, a := range noResource {
			c, log := fakeAPI(t, map[string]answer{
				"GET /v1/payments/" + unsaidPaymentID: a,
				"GET /v1/payouts/" + unsaidPayoutID:   a,
				"GET /v1/balance":                     a,
			})
			_, err := c.GetPayment(ctx, unsaidPaymentID)
			assert.Error(t, err, "GetPayment, HTTP %d %q", a.status, a.body)
			assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome, "a read changes nothing")
			_, err = c.GetPayout(ctx, unsaidPayoutID)
			assert.Error(t, err, "GetPayout, HTTP %d %q", a.status, a.body)
			_, err = c.GetBalance(ctx)
			assert.Error(t, err, "GetBalance, HTTP %d %q", a.status, a.body)
			assert.Len(t, log.all(), 3, "one request each")
		}
	})

	t.Run("creates and state changes: read back", func(t *testing.T) {
		t.Parallel()
		byExtID := "GET /v1/payments/by-ext-id/order-1"
		byID := "GET /v1/payments/" + unsaidPaymentID
		for _, tc := range []struct {
			name     string
			post     string
			readBack string
			body     string
			call     func(*paykit.Client) (id string, status string, reconciled bool, err error)
			want     string
		}{
			{"CreatePayment", "/v1/payments", byExtID, unsaidPaymentJSON("PENDING"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "order-1", Amount: dec("1500.50"), Method: paykit.MethodCard})
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "PENDING"},
			{"CreatePayout", "/v1/payouts", "GET /v1/payouts/by-ext-id/payout-1", unsaidPayoutJSON("pending"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "payout-1", Amount: dec("2500.00"),
						Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "IVAN IVANOV"})
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "pending"},
			{"ConfirmPayment", "/v1/payments/" + unsaidPaymentID + "/confirm", byID, unsaidPaymentJSON("PROCESSING"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.ConfirmPayment(ctx, unsaidPaymentID, nil)
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "PROCESSING"},
			{"CancelPayment", "/v1/payments/" + unsaidPaymentID + "/cancel", byID, unsaidPaymentJSON("CANCELLED"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CancelPayment(ctx, unsaidPaymentID)
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "CANCELLED"},
			{"OpenDispute", "/v1/payments/" + unsaidPaymentID + "/dispute", byID, unsaidPaymentJSON("DISPUTE"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.OpenDispute(ctx, unsaidPaymentID, paykit.OpenDisputeParams{})
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "DISPUTE"},
			{"CancelDispute", "/v1/payments/" + unsaidPaymentID + "/dispute/cancel", byID, unsaidPaymentJSON("CANCELLED_APPEAL"),
				func(c *paykit.Client) (string, string, bool, error) {
					p, err := c.CancelDispute(ctx, unsaidPaymentID)
					if err != nil {
						return "", "", false, err
					}
					return p.ID, string(p.Status), p.Reconciled, nil
				}, "CANCELLED_APPEAL"},
		} {
			for _, a := range noResource {
				c, log := fakeAPI(t, map[string]answer{
					"POST " + tc.post: a,
					tc.readBack:       {http.StatusOK, tc.body},
				})
				id, status, reconciled, err := tc.call(c)
				if !assert.NoError(t, err, "%s answered HTTP %d %q", tc.name, a.status, a.body) {
					continue
				}
				assert.NotEmpty(t, id, tc.name)
				assert.Equal(t, tc.want, status, "%s: the read-back's status", tc.name)
				assert.True(t, reconciled, "%s: the result says it was read back", tc.name)
				assert.Equal(t, 1, log.count("POST", tc.post), "%s sent once", tc.name)
				rb := strings.SplitN(tc.readBack, " ", 2)
				assert.GreaterOrEqual(t, log.count(rb[0], rb[1]), 1, "%s read back", tc.name)
			}
		}
	})

	t.Run("transfers and withdrawals: unknown outcome", func(t *testing.T) {
		t.Parallel()
		for _, a := range noResource {
			c, log := fakeAPI(t, map[string]answer{"POST /v1/transfers": a, "POST /v1/withdrawals": a})
			_, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: "t1", ToTerminalID: "t2", Amount: dec("10")})
			assert.ErrorIs(t, err, paykit.ErrUnknownOutcome, "transfer, HTTP %d %q", a.status, a.body)
			_, err = c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: "t1", Amount: dec("10"), Address: "TXyz"})
			assert.ErrorIs(t, err, paykit.ErrUnknownOutcome, "withdrawal, HTTP %d %q", a.status, a.body)
			assert.Equal(t, []string{"POST /v1/transfers", "POST /v1/withdrawals"}, requestLines(log),
				"each sent once, nothing else (no read can settle a money move)")
		}
	})
}
