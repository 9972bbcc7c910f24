package paykit_test

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// mangle serves the sandbox, except that the answer to method+path is
// replaced after the sandbox has applied the request: the service did the
// work, and the merchant cannot read what it said.
func mangle(t *testing.T, sb *sandbox.Server, method, path, mode string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method || r.URL.Path != path {
			sb.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		switch mode {
		case "truncated": // no Content-Length, connection closed mid-body
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
			buf.Write(body[:len(body)/2])
			buf.Flush()
			conn.Close()
		case "empty":
			w.WriteHeader(http.StatusOK)
		case "204":
			w.WriteHeader(http.StatusNoContent)
		case "html":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "<html><body>Maintenance</body></html>")
		default:
			panic("unknown mode " + mode)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sandboxClient(t *testing.T, url string, opts ...paykit.Option) *paykit.Client {
	t.Helper()
	opts = append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond)}, opts...)
	c, err := paykit.NewClient(url, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret), opts...)
	require.NoError(t, err)
	return c
}

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

func sbTerminalBalance(t *testing.T, sb *sandbox.Server, id string) decimal.Decimal {
	t.Helper()
	for _, term := range sb.Terminals(sandbox.DefaultAPIKey) {
		if term.ID == id {
			return term.Balance
		}
	}
	t.Fatalf("no terminal %s", id)
	return decimal.Decimal{}
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

// bareTransport forwards requests to the server with a transport of its
// own and a context that carries no httptrace, like a signing proxy or an
// instrumentation wrapper: the SDK sees no trace events from it.
type bareTransport struct {
	inner http.RoundTripper
	after func(*http.Response, error) (*http.Response, error)
}

func (b *bareTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(context.Background())
	resp, err := b.inner.RoundTrip(out)
	return b.after(resp, err)
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

// Point 7: a Retry-After too large for any integer is a refusal answered
// at once, not a retry at once.
func TestRetryAfterOverflowNotRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "99999999999999999999")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	_, err := sandboxClient(t, srv.URL).GetBalance(bg)
	require.ErrorIs(t, err, paykit.ErrInternal)
	assert.Equal(t, int32(1), n.Load())
}

// Point 13: an empty HMAC secret is refused when the client is made.
func TestEmptySecretRefusedAtNewClient(t *testing.T) {
	t.Parallel()
	_, err := paykit.NewClient("https://api.example", "pk", paykit.HMACSigner(""))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "empty secret")
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

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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

// Issue 16, point 10: Clients made without WithHTTPClient share one
// transport; CloseIdleConnections releases it; a merchant's transport is
// never closed.
func TestSharedDefaultTransport(t *testing.T) {
	t.Parallel()
	var opened atomic.Int32
	closed := make(chan struct{}, 64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"balance":1,"balance_frozen":0,"currency":"USDT"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed:
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	var last *paykit.Client
	for range 20 {
		c, err := paykit.NewClient(srv.URL, "pk", paykit.HMACSigner("s")) // a Client per tenant, discarded
		require.NoError(t, err)
		_, err = c.GetBalance(bg)
		require.NoError(t, err)
		last = c
	}
	assert.Equal(t, int32(1), opened.Load(), "20 Clients, one pooled connection")
	last.CloseIdleConnections()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle connection was not closed")
	}

	var closes atomic.Int32
	mine := &closeCounter{RoundTripper: &http.Transport{}, n: &closes}
	c, err := paykit.NewClient(srv.URL, "pk", paykit.HMACSigner("s"), paykit.WithHTTPClient(&http.Client{Transport: mine}))
	require.NoError(t, err)
	_, err = c.GetBalance(bg)
	require.NoError(t, err)
	c.CloseIdleConnections()
	assert.Equal(t, int32(0), closes.Load(), "the merchant's transport is theirs")
}

type closeCounter struct {
	http.RoundTripper
	n *atomic.Int32
}

func (c *closeCounter) CloseIdleConnections() { c.n.Add(1) }

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
