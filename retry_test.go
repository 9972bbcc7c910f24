package paykit_test

import (
	"context"
	"errors"
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

	t.Run("confirm retry finds the payment cancelled: the error stands", func(t *testing.T) {
		r := rig(t)
		p, err := r.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "sc-x", Amount: decimal.RequireFromString("1000")})
		require.NoError(t, err)
		_, err = r.c.CancelPayment(bg, p.ID)
		require.NoError(t, err)
		require.NoError(t, r.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payments/{id}/confirm", Mode: sandbox.FaultErrorBefore, Status: 502}))
		_, err = r.c.ConfirmPayment(bg, p.ID, nil)
		require.ErrorIs(t, err, paykit.ErrPaymentNotConfirmable)
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
