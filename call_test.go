package paykit

// Tests of the call path (call.go): every answer is checked by the
// operation table, not call by call; bodies are capped and decoded without
// panics; attempts are logged, timed out and traced. From
// TestAnswerThatIsNotTheResource on, each protects the promise that an
// answer about something else is never returned as the result.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var createParams = CreatePaymentParams{ExtID: "order-A", Amount: dec("1500.50"), Method: MethodCard}

// Hole 1: a 2xx whose body is not the resource is never a success.
func TestAnswerThatIsNotTheResource(t *testing.T) {
	t.Parallel()
	t.Run("create answered with an error body, payment not found on read-back", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payments": fixed(200, `{"error":"PAY_004","message":"no requisites"}`),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CreatePayment(ctx, createParams)
		assert.Nil(t, p)
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.Contains(t, err.Error(), `GetPaymentByExtID("order-A")`)
		assert.Contains(t, err.Error(), "the answer carries no id")
		assert.Equal(t, 1, rt.count("GET /v1/payments/by-ext-id/order-A"), "read back once")
	})
	t.Run("create answered with {}, payment found on read-back", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payments":                  fixed(201, `{}`),
			"GET /v1/payments/by-ext-id/order-A": fixed(200, paymentBody(paymentID, "order-A", "1500.50", "PENDING")),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CreatePayment(ctx, createParams)
		require.NoError(t, err)
		assert.True(t, p.Reconciled)
		assert.Equal(t, paymentID, p.ID)
		assertDec(t, "1500.50", p.Amount, "amount")
	})
	t.Run("withdrawal answered with {}", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){"POST /v1/withdrawals": fixed(200, `{}`)})
		c, _ := serverClient(t, rt)
		w, err := c.CreateWithdrawal(ctx, CreateWithdrawalParams{TerminalID: "t1", Amount: dec("10"), Address: "TQn9"})
		assert.Nil(t, w)
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.Contains(t, err.Error(), "the answer carries no id")
		assert.Equal(t, 1, rt.count("POST /v1/withdrawals"), "never re-sent")
	})
	t.Run("state change answered with an empty object", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payments/" + paymentID + "/cancel": fixed(200, `{}`),
			"GET /v1/payments/" + paymentID:              fixed(200, paymentBody(paymentID, "order-A", "1500.50", "CANCELLED")),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CancelPayment(ctx, paymentID)
		require.NoError(t, err)
		assert.True(t, p.Reconciled)
		assert.Equal(t, PaymentStatusCancelled, p.Status)
	})
}

// Hole 2: an answer about another resource, or not as asked, is never the
// result: it is read back.
func TestAnswerAboutAnotherResource(t *testing.T) {
	t.Parallel()
	payout := func(extID, amount string) string {
		return fmt.Sprintf(`{"id":%q,"ext_id":%q,"amount":%s,"currency":"RUB","method":"card","requisites":"4111111111111111",`+
			`"holder_name":"IVAN IVANOV","bank":"","status":"pending","created_at":"2026-11-22T10:00:00Z"}`, payoutID, extID, amount)
	}
	payoutParams := CreatePayoutParams{ExtID: "po-A", Amount: dec("2500.00"), Method: PayoutMethodCard,
		Requisites: "4111111111111111", HolderName: "IVAN IVANOV"}
	t.Run("payout answered with ext_id B, A found on read-back", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payouts":               fixed(201, payout("po-B", "2500.00")),
			"GET /v1/payouts/by-ext-id/po-A": fixed(200, payout("po-A", "2500.00")),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CreatePayout(ctx, payoutParams)
		require.NoError(t, err)
		assert.Equal(t, "po-A", p.ExtID, "never B")
		assert.True(t, p.Reconciled)
	})
	t.Run("payout answered with ext_id B, A missing", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payouts":               fixed(201, payout("po-B", "2500.00")),
			"GET /v1/payouts/by-ext-id/po-A": fixed(404, `{"error":"PAY_001","message":"payout not found"}`),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CreatePayout(ctx, payoutParams)
		assert.Nil(t, p)
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.ErrorIs(t, err, ErrPayoutNotFound)
		assert.Contains(t, err.Error(), `ext_id "po-B", not "po-A"`)
	})
	t.Run("payout answered with another amount", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payouts":               fixed(201, payout("po-A", "25000.00")),
			"GET /v1/payouts/by-ext-id/po-A": fixed(200, payout("po-A", "25000.00")),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CreatePayout(ctx, payoutParams)
		assert.Nil(t, p)
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.Contains(t, err.Error(), "not as this call asked")
	})
	t.Run("payment created with another amount", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payments":                  fixed(201, paymentBody(paymentID, "order-A", "15005.00", "PENDING")),
			"GET /v1/payments/by-ext-id/order-A": fixed(200, paymentBody(paymentID, "order-A", "15005.00", "PENDING")),
		})
		c, _ := serverClient(t, rt)
		_, err := c.CreatePayment(ctx, createParams)
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.Contains(t, err.Error(), "amount is 15005, not 1500.5")
	})
	t.Run("payment created with another method", func(t *testing.T) {
		t.Parallel()
		sbp := strings.Replace(paymentBody(paymentID, "order-A", "1500.50", "PENDING"), `"method":"CARD"`, `"method":"SBP"`, 1)
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payments":                  fixed(201, sbp),
			"GET /v1/payments/by-ext-id/order-A": fixed(200, sbp),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CreatePayment(ctx, createParams)
		assert.Nil(t, p, "a payment by SBP is not the CARD payment asked for")
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.Contains(t, err.Error(), `method is "SBP", not "CARD"`)
		assert.Equal(t, 1, rt.count("GET /v1/payments/by-ext-id/order-A"), "read back once")
	})
	t.Run("cancel answered with payment B cancelled while A is pending", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payments/" + paymentID + "/cancel": fixed(200, paymentBody(otherPaymentID, "order-B", "1500.50", "CANCELLED")),
			"GET /v1/payments/" + paymentID:              fixed(200, paymentBody(paymentID, "order-A", "1500.50", "PENDING")),
		})
		c, _ := serverClient(t, rt)
		p, err := c.CancelPayment(ctx, paymentID)
		assert.Nil(t, p, "B is never returned")
		require.ErrorIs(t, err, ErrUnknownOutcome)
		assert.Contains(t, err.Error(), "the payment is PENDING, not CANCELLED")
		assert.Contains(t, err.Error(), `GetPayment("`+paymentID+`")`)
	})
	t.Run("confirm answered in a state it does not drive to", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){
			"POST /v1/payments/" + paymentID + "/confirm": fixed(200, paymentBody(paymentID, "order-A", "1500.50", "PENDING")),
			"GET /v1/payments/" + paymentID:               fixed(200, paymentBody(paymentID, "order-A", "1500.50", "PROCESSING")),
		})
		c, _ := serverClient(t, rt)
		p, err := c.ConfirmPayment(ctx, paymentID, nil)
		require.NoError(t, err)
		assert.Equal(t, PaymentStatusProcessing, p.Status)
		assert.True(t, p.Reconciled)
	})
	t.Run("transfer answered for other terminals", func(t *testing.T) {
		t.Parallel()
		rt := newRoutes(map[string]func() (int, string){"POST /v1/transfers": fixed(200,
			`{"success":true,"from_terminal_id":"t9","to_terminal_id":"t2","amount":5,"currency":"USDT"}`)})
		c, _ := serverClient(t, rt)
		_, err := c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "t1", ToTerminalID: "t2", Amount: dec("5")})
		require.ErrorIs(t, err, ErrUnknownOutcome)
	})
}

// Hole 3: a 2xx over the size cap keeps its status and is read back.
func TestOversizedSuccessIsReadBack(t *testing.T) {
	t.Parallel()
	huge := `{"pad":"` + strings.Repeat("x", MaxResponseBytes) + `"}`
	rt := newRoutes(map[string]func() (int, string){
		"POST /v1/payments":                  fixed(201, huge),
		"GET /v1/payments/by-ext-id/order-A": fixed(200, paymentBody(paymentID, "order-A", "1500.50", "PENDING")),
		"POST /v1/transfers":                 fixed(200, huge),
	})
	c, _ := serverClient(t, rt)
	p, err := c.CreatePayment(ctx, createParams)
	require.NoError(t, err)
	assert.True(t, p.Reconciled)
	assert.Equal(t, 1, rt.count("POST /v1/payments"), "not re-sent")

	_, err = c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "t1", ToTerminalID: "t2", Amount: dec("5")})
	require.ErrorIs(t, err, ErrUnknownOutcome)
	assert.Contains(t, err.Error(), "larger than")
}

// Hole 8: a read refused for naming another resource is an invalid answer
// to the Observer, not a transport error.
func TestOutcomeOfAnAnswerAboutAnotherResource(t *testing.T) {
	t.Parallel()
	rec := &outcomeRecorder{}
	rt := newRoutes(map[string]func() (int, string){
		"GET /v1/payments/" + paymentID: fixed(200, paymentBody(otherPaymentID, "order-B", "100", "PENDING")),
	})
	c, _ := serverClient(t, rt, WithObserver(rec))
	_, err := c.GetPayment(ctx, paymentID)
	require.Error(t, err)
	assert.Equal(t, []Outcome{OutcomeInvalidAnswer}, rec.outcomes())
	assert.ErrorContains(t, err, "the answer is about id")
}

type outcomeRecorder struct {
	mu  sync.Mutex
	got []Outcome
}

func (o *outcomeRecorder) CallStart(ctx context.Context, _ *CallInfo) context.Context { return ctx }
func (o *outcomeRecorder) AttemptStart(ctx context.Context, _ *AttemptInfo) context.Context {
	return ctx
}
func (o *outcomeRecorder) AttemptEnd(context.Context, *AttemptInfo) {}
func (o *outcomeRecorder) RetryWait(context.Context, *RetryInfo)    {}
func (o *outcomeRecorder) CallEnd(_ context.Context, end *CallEndInfo) {
	o.mu.Lock()
	o.got = append(o.got, end.Outcome)
	o.mu.Unlock()
}
func (o *outcomeRecorder) outcomes() []Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Outcome(nil), o.got...)
}

// codeRecorder keeps the codes and errors an Observer is shown.
type codeRecorder struct {
	mu  sync.Mutex
	got []string
}

func (o *codeRecorder) add(s string)                                               { o.mu.Lock(); o.got = append(o.got, s); o.mu.Unlock() }
func (o *codeRecorder) CallStart(ctx context.Context, _ *CallInfo) context.Context { return ctx }
func (o *codeRecorder) AttemptStart(ctx context.Context, _ *AttemptInfo) context.Context {
	return ctx
}
func (o *codeRecorder) AttemptEnd(_ context.Context, a *AttemptInfo) {
	o.add(fmt.Sprintf("attempt code=%s err=%v", a.Code, a.Err))
}
func (o *codeRecorder) RetryWait(context.Context, *RetryInfo) {}
func (o *codeRecorder) CallEnd(_ context.Context, end *CallEndInfo) {
	o.add(fmt.Sprintf("end code=%s err=%v", end.Code, end.Err))
}
func (o *codeRecorder) all() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.got...)
}

// The API key and card numbers in the "error" field reach an Observer's
// AttemptInfo.Code and CallEndInfo.Code only as the fixed word.
func TestErrorCodeIsSanitizedForObservers(t *testing.T) {
	t.Parallel()
	for _, code := range []string{testKey, "4111111111111111", strings.Repeat("A", 33)} {
		rt := newRoutes(map[string]func() (int, string){
			"GET /v1/payments/" + paymentID: fixed(400, `{"error":"`+code+`","message":"x"}`),
		})
		rec := &codeRecorder{}
		c, _ := serverClient(t, rt, WithObserver(rec))
		_, err := c.GetPayment(ctx, paymentID)
		require.Error(t, err)
		got := rec.all()
		require.Len(t, got, 2, code)
		assert.True(t, strings.HasPrefix(got[0], "attempt code="+invalidCode+" "), "%s: %s", code, got[0])
		assert.True(t, strings.HasPrefix(got[1], "end code="+invalidCode+" "), "%s: %s", code, got[1])
		for _, line := range got {
			assert.NotContains(t, line, testKey)
			assert.NotContains(t, line, "4111111111111111")
			assert.NotContains(t, line, strings.Repeat("A", 33))
		}
	}
}

// A body that is only an error code's shape on a 2xx is refused by every
// write, never returned empty.
func TestEveryWriteChecksItsAnswer(t *testing.T) {
	t.Parallel()
	body := `{"error":"SYS_001","message":"boom"}`
	rt := newRoutes(map[string]func() (int, string){
		"POST /v1/payments/" + paymentID + "/confirm":        fixed(200, body),
		"POST /v1/payments/" + paymentID + "/dispute":        fixed(200, body),
		"POST /v1/payments/" + paymentID + "/dispute/cancel": fixed(200, body),
		"POST /v1/payouts":               fixed(200, body),
		"POST /v1/transfers":             fixed(200, body),
		"GET /v1/payments/" + paymentID:  fixed(404, `{"error":"PAY_006"}`),
		"GET /v1/payouts/by-ext-id/po-1": fixed(404, `{"error":"PAY_001"}`),
	})
	c, _ := serverClient(t, rt)
	calls := map[string]func() (any, error){
		"ConfirmPayment": func() (any, error) { return c.ConfirmPayment(ctx, paymentID, nil) },
		"OpenDispute":    func() (any, error) { return c.OpenDispute(ctx, paymentID, OpenDisputeParams{}) },
		"CancelDispute":  func() (any, error) { return c.CancelDispute(ctx, paymentID) },
		"CreatePayout": func() (any, error) {
			return c.CreatePayout(ctx, CreatePayoutParams{ExtID: "po-1", Amount: dec("1"), Method: PayoutMethodSBP,
				Requisites: "+79001234567", HolderName: "A B"})
		},
		"CreateTransfer": func() (any, error) {
			return c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
		},
	}
	for name, f := range calls {
		_, err := f()
		require.ErrorIs(t, err, ErrUnknownOutcome, name)
		assert.False(t, errors.Is(err, ErrInternal) && !bytes.Contains([]byte(err.Error()), []byte("carries no")), name)
	}
}

// Attempts of calls nothing can cancel share deadline windows: every
// attempt still gets at least its timeout, and at most a 64th more.
func TestSharedDeadlineWindows(t *testing.T) {
	t.Parallel()
	const timeout = 30 * time.Second
	tr := &attemptTransport{timeout: timeout}
	t0 := time.Now()
	first := tr.sharedDeadline(t0)
	for _, after := range []time.Duration{0, time.Millisecond, timeout/windowSlices - time.Nanosecond, timeout / windowSlices, time.Second} {
		start := t0.Add(after)
		w := tr.sharedDeadline(start)
		deadline, ok := w.Deadline()
		require.True(t, ok)
		assert.False(t, deadline.Before(start.Add(timeout)), "start +%s: deadline %s short of the timeout", after, deadline.Sub(start))
		assert.False(t, deadline.After(start.Add(timeout+timeout/windowSlices)), "start +%s: deadline %s too far", after, deadline.Sub(start))
		if after < timeout/windowSlices {
			assert.Equal(t, first, w, "start +%s shares the first window", after)
		} else {
			assert.NotEqual(t, first, w, "start +%s opens a new window", after)
		}
	}
}

// An attempt under a shared window sees the call's values and the
// window's deadline, and what net/http derives from it is cancelled with
// the window, through the context package's own bookkeeping.
func TestAttemptContextUnderAWindow(t *testing.T) {
	t.Parallel()
	k := &call{op: opGetPayment}
	parent := context.WithValue(context.WithValue(context.Background(), callKey{}, "shadowed"), callKey{}, k)
	window, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	a := &attemptCtx{call: parent, window: window}
	assert.Same(t, k, callOf(a), "the call is found through the attempt")
	d1, _ := a.Deadline()
	d2, _ := window.Deadline()
	assert.Equal(t, d2, d1)
	child, stop := context.WithCancelCause(a) // as net/http's transport does
	defer stop(nil)
	select {
	case <-child.Done():
		t.Fatal("cancelled before the window")
	default:
	}
	cancel()
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the window's end did not reach the derived context")
	}
	assert.ErrorIs(t, child.Err(), context.Canceled)
	assert.ErrorIs(t, a.Err(), context.Canceled)
}

// A caller's own httptrace hooks fire for a money move as for a read: the
// SDK's connection trace is composed with them, never put in their place.
// (Before, newRequest set its hooks after WithClientTrace had composed the
// caller's into them, which silenced the caller's for every write.)
func TestCallersClientTraceFires(t *testing.T) {
	t.Parallel()
	rt := newRoutes(map[string]func() (int, string){
		"POST /v1/transfers":            fixed(200, transferJSON),
		"GET /v1/payments/" + paymentID: fixed(200, paymentBody(paymentID, "order-A", "1500.50", "PENDING")),
	})
	c, _ := serverClient(t, rt)
	traced := func() (context.Context, *atomic.Int32, *atomic.Int32) {
		var wrote, got atomic.Int32
		return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn:      func(httptrace.GotConnInfo) { got.Add(1) },
			WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Add(1) },
		}), &wrote, &got
	}

	tctx, wrote, got := traced()
	tr, err := c.CreateTransfer(tctx, CreateTransferParams{FromTerminalID: "term-main", ToTerminalID: "term-2", Amount: dec("150.25")})
	require.NoError(t, err)
	assertDec(t, "150.25", tr.Amount, "amount")
	assert.Equal(t, int32(1), got.Load(), "caller's GotConn for CreateTransfer")
	assert.Equal(t, int32(1), wrote.Load(), "caller's WroteRequest for CreateTransfer")

	tctx, wrote, got = traced()
	p, err := c.GetPayment(tctx, paymentID)
	require.NoError(t, err)
	assert.Equal(t, paymentID, p.ID)
	assert.Equal(t, int32(1), got.Load(), "caller's GotConn for GetPayment")
	assert.Equal(t, int32(1), wrote.Load(), "caller's WroteRequest for GetPayment")
}

func TestResponseBodyIsCapped(t *testing.T) {
	t.Parallel()
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"banks":[`))
		chunk := bytes.Repeat([]byte(`{"code":"x","name":"y"},`), 4096)
		for written := 0; written <= MaxResponseBytes; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}), WithMaxRetries(2))
	_, err := c.ListBanks(ctx)
	require.ErrorContains(t, err, "larger than 16777216 bytes")
	var answer *answerError
	assert.ErrorAs(t, err, &answer, "an answer that arrived, not a lost one")
}

func TestDecodingFailuresAreErrorsNotPanics(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		``, ` null `, `not json`, `{"id": 5}`, `{"amount":"1e999999999"}`, `{"amount":"12abc"}`, `{"created_at":"yesterday"}`,
		`{"created_at":5}`, `{"status":5}`, `{"requisites":"x"}`, `{"usdt_rate":1e-99999}`, `[]`,
	} {
		c, _ := mockClient(t, 200, body)
		p, err := c.GetPayment(ctx, paymentID)
		if body == `[]` {
			// An array where an object was expected is a decode error too.
			require.Error(t, err, body)
			continue
		}
		assert.Nil(t, p, body)
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), "paykit: GetPayment: decoding response (HTTP 200)", body)
	}
}

func TestContextHandling(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, 200, `{"banks":[]}`)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := c.ListBanks(cancelled)
	assert.ErrorIs(t, err, context.Canceled)
	//lint:ignore SA1012 checking the nil-context guard on purpose
	_, err = c.ListBanks(nil) //nolint:staticcheck
	assert.ErrorContains(t, err, "nil context")
	assert.Equal(t, 0, rec.count())
}

// connCounter counts the TCP connections a test server accepts.
func connCounter(srv *httptest.Server) *atomic.Int32 {
	var n atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

func TestFailedCallsKeepTheConnectionPool(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			// Far past the 4 KiB that retryablehttp drains: the SDK reads
			// whole bodies, so the connection still goes back to the pool.
			w.WriteHeader(502)
			w.Write(bytes.Repeat([]byte("<p>bad gateway</p>"), 100<<10/18))
			return
		}
		w.Write([]byte(`{"banks":[]}`))
	}))
	conns := connCounter(srv)
	srv.Start()
	defer srv.Close()
	c, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), WithRetryWait(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	_, err = c.ListBanks(ctx)
	require.NoError(t, err)
	fail.Store(true)
	_, err = c.ListBanks(ctx)
	require.ErrorIs(t, err, ErrInternal)
	fail.Store(false)
	_, err = c.ListBanks(ctx)
	require.NoError(t, err)
	assert.Equal(t, int32(1), conns.Load(), "one connection serves every attempt, failed ones included")
}

func TestLoggingOneLinePerAttemptWithoutSecrets(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(502)
			w.Write([]byte("card 4111111111111111"))
			return
		}
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"` + payoutID + `","ext_id":"po-9","amount":10,"method":"card","requisites":"4111111111111111",` +
			`"holder_name":"IVAN IVANOV","bank":"","status":"pending"}`))
	}))
	var buf TestLog
	c2, err := NewClient(c.base.String(), testKey, HMACSigner(testSecret), WithLogger(buf.Logger()),
		WithRetryWait(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	_, err = c2.CreatePayout(ctx, CreatePayoutParams{ExtID: "po-9", Amount: dec("10"), Method: PayoutMethodCard,
		Requisites: "4111111111111111", HolderName: "IVAN IVANOV"})
	require.NoError(t, err)
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Contains(t, lines[1], `"msg":"paykit: retrying"`)
	assert.Contains(t, lines[1], `"reason":"server error"`)
	lines = []string{lines[0], lines[2]}
	for i, want := range []string{`"status":502`, `"status":201`} {
		assert.Contains(t, lines[i], `"msg":"paykit: attempt"`)
		assert.Contains(t, lines[i], `"op":"CreatePayout"`)
		assert.Contains(t, lines[i], `"method":"POST"`)
		assert.Contains(t, lines[i], `"path":"/v1/payouts"`)
		assert.Contains(t, lines[i], fmt.Sprintf(`"attempt":%d`, i+1))
		assert.Contains(t, lines[i], `"duration":`)
		assert.Contains(t, lines[i], want)
	}
	for _, secret := range []string{testKey, testSecret, "4111111111111111", "IVAN", "X-Signature"} {
		assert.NotContains(t, out, secret)
	}
}

func TestSilentByDefault(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, 200, `{"banks":[]}`)
	assert.False(t, c.logger.Enabled(ctx, slog.LevelError))
}

func TestAttemptTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // the first attempt stalls until the test ends
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Write([]byte(`{"fee":"1.50","currency":"USDT"}`))
	}))
	defer srv.Close()
	var logs TestLog
	hc := &http.Client{Timeout: 100 * time.Millisecond}
	c, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), WithHTTPClient(hc),
		WithRetryWait(time.Millisecond, time.Millisecond), WithLogger(logs.Logger()))
	require.NoError(t, err)
	fee, err := c.GetWithdrawalFee(ctx)
	require.NoError(t, err, "the stalled attempt is abandoned and retried")
	assert.Equal(t, "1.50", fee.Fee.StringFixed(2))
	// At least the stalled attempt and the one that answered; on a loaded
	// machine a retry may time out too before one answers.
	assert.GreaterOrEqual(t, calls.Load(), int32(2))
	assert.Contains(t, logs.String(), "attempt timed out after 100ms")
	assert.Equal(t, 100*time.Millisecond, hc.Timeout, "the merchant's client is left untouched")

	calls.Store(0)
	c, err = NewClient(srv.URL, testKey, HMACSigner(testSecret), WithHTTPClient(hc), WithMaxRetries(0))
	require.NoError(t, err)
	_, err = c.GetWithdrawalFee(ctx)
	require.ErrorContains(t, err, "attempt timed out after 100ms")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// Response buffers are pooled: a decoded resource must own its bytes, so a
// later call reusing the buffer leaves an earlier result intact, even with
// calls running at once.
func TestPooledResponseBuffersAreNotShared(t *testing.T) {
	t.Parallel()
	const ids = 8
	body := func(i int) []byte {
		id := fmt.Sprintf("6f1c2a5e-8d0b-4d7e-9b1a-%012d", i)
		return []byte(strings.Replace(strings.Replace(benchPaymentJSON, paymentID, id, 1),
			`"order-1001"`, fmt.Sprintf(`"order-%d-%s"`, i, strings.Repeat("x", 40*i)), 1))
	}
	srv := newBenchServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(r.URL.Path, "/v1/payments/6f1c2a5e-8d0b-4d7e-9b1a-%012d", &i)
		writeCanned(w, http.StatusOK, body(i))
	}), nil)
	c := newBenchClient(t, srv)
	first, err := c.GetPayment(ctx, fmt.Sprintf("6f1c2a5e-8d0b-4d7e-9b1a-%012d", 0))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 25 {
				i := (g + n) % ids
				id := fmt.Sprintf("6f1c2a5e-8d0b-4d7e-9b1a-%012d", i)
				p, err := c.GetPayment(ctx, id)
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, id, p.ID)
				assert.Equal(t, fmt.Sprintf("order-%d-%s", i, strings.Repeat("x", 40*i)), p.ExtID)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, "order-0-", first.ExtID, "a later call changed an earlier result")
	assert.Equal(t, "2200123456789012", first.Requisites.Value)
}

// A body of unknown length (chunked), larger than any pooled buffer has
// grown to, is read whole.
func TestChunkedResponseReadWhole(t *testing.T) {
	t.Parallel()
	page := benchPayoutPage(0, 1000, 1000)
	srv := newBenchServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for rest := page; len(rest) > 0; {
			n := min(len(rest), 7000)
			w.Write(rest[:n])
			w.(http.Flusher).Flush() // no Content-Length: chunked
			rest = rest[n:]
		}
	}), nil)
	c := newBenchClient(t, srv)
	l, err := c.ListPayouts(ctx, ListPayoutsParams{Limit: 1000})
	require.NoError(t, err)
	require.Len(t, l.Payouts, 1000)
	assert.Equal(t, "po-999", l.Payouts[999].ExtID)
	assert.Equal(t, 1000, l.Total)
}

// Every attempt of a retried POST carries the whole body, with its length
// and its signature: the first attempt's reader is reused from the call
// state, later ones are fresh.
func TestRetriedPostSendsTheWholeBody(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	var lengths []int64
	var mu sync.Mutex
	srv := newBenchServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		mu.Lock()
		lengths = append(lengths, r.ContentLength)
		n := len(lengths)
		mu.Unlock()
		if n < 3 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		writeCanned(w, http.StatusCreated, []byte(benchPaymentJSON))
	}), nil)
	c, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), WithRetryWait(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	p, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-1001", Amount: benchAmount, Method: MethodCard})
	require.NoError(t, err)
	assert.Equal(t, paymentID, p.ID)
	want := `{"ext_id":"order-1001","amount":1500.50,"method":"CARD"}`
	reqs := rec.all()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assertWire(t, r, "POST", "/v1/payments", "application/json", want)
		assert.Equal(t, int64(len(want)), lengths[i], "attempt %d Content-Length", i+1)
	}
}

// The header values every request carries (identity, user agent, Accept,
// Content-Type) stay as they were when a transport adds to another
// request's headers.
func TestSharedHeaderValuesStayPerRequest(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	var accepts [][]string
	var mu sync.Mutex
	srv := newBenchServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		mu.Lock()
		accepts = append(accepts, r.Header.Values("Accept"))
		mu.Unlock()
		writeCanned(w, http.StatusOK, []byte(benchPaymentJSON))
	}), nil)
	adding := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r.Header.Add("Accept", "text/plain")
		r.Header.Add("User-Agent", "extra/1.0")
		return http.DefaultTransport.RoundTrip(r)
	})
	meddler, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: adding}))
	require.NoError(t, err)
	plain := newBenchClient(t, srv)
	for range 2 {
		_, err = meddler.GetPayment(ctx, paymentID)
		require.NoError(t, err)
		_, err = plain.GetPayment(ctx, paymentID)
		require.NoError(t, err)
	}
	reqs := rec.all()
	require.Len(t, reqs, 4)
	for i, r := range reqs {
		if i%2 == 0 {
			assert.Equal(t, []string{"application/json", "text/plain"}, accepts[i])
			continue
		}
		assert.Equal(t, []string{"application/json"}, accepts[i], "request %d", i)
		assert.Equal(t, rawUserAgent, r.UserAgent, "request %d", i)
	}
}

// The attempt timeout still bounds an attempt when the caller's deadline
// is later: only an earlier caller deadline makes the attempt's own
// context unnecessary.
func TestAttemptTimeoutUnderALaterCallerDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	srv := newBenchServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), nil)
	c, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), WithMaxRetries(0),
		WithHTTPClient(&http.Client{Timeout: 50 * time.Millisecond}))
	require.NoError(t, err)
	later, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err = c.GetPayment(later, paymentID)
	require.ErrorContains(t, err, "attempt timed out after 50ms")
	assert.NoError(t, later.Err())

	sooner, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	c, err = NewClient(srv.URL, testKey, HMACSigner(testSecret), WithMaxRetries(0))
	require.NoError(t, err)
	_, err = c.GetPayment(sooner, paymentID)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotContains(t, err.Error(), "attempt timed out", "the caller's deadline ended the call, not the attempt's")
}

// A POST goes out in one write, headers and body together, with its
// Content-Length: net/http flushes the headers on their own (or probes and
// chunks the body) when it does not recognise the body as one in memory.
func TestPostGoesOutInOneWrite(t *testing.T) {
	t.Parallel()
	var lengths []int64
	var mu sync.Mutex
	srv := newBenchServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lengths = append(lengths, r.ContentLength)
		mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		writeCanned(w, http.StatusCreated, echoExtID([]byte(benchPaymentJSON), body))
	}), nil)
	var writes atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	countWrites(tr, &writes)
	t.Cleanup(tr.CloseIdleConnections)
	c, err := NewClient(srv.URL, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: tr}))
	require.NoError(t, err)
	for i := range 3 {
		before := writes.Load()
		_, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-" + strconv.Itoa(i), Amount: benchAmount, Method: MethodCard})
		require.NoError(t, err)
		assert.Equal(t, int32(1), writes.Load()-before, "writes for POST %d", i)
	}
	assert.Equal(t, []int64{53, 53, 53}, lengths)
}

func TestCheckRetryStopsForContextAndRetryAfter(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, 200, `{}`, WithMaxRetries(DefaultMaxRetries))
	now := time.Now().UTC().Truncate(time.Second) // the context deadline below is real time
	c.now = func() time.Time { return now }
	retry := func(ctx context.Context) bool {
		ok, err := c.checkRetry(ctx, nil, nil)
		require.NoError(t, err)
		return ok
	}
	assert.True(t, retry(callCtx(opGetPayment, 503, "Retry-After", "60")))
	assert.False(t, retry(callCtx(opGetPayment, 503, "Retry-After", "61")), "over a minute is answered at once")
	assert.False(t, retry(callCtx(opGetPayment, 503, "Retry-After", now.Add(2*time.Minute).Format(http.TimeFormat))))
	assert.True(t, retry(callCtx(opGetPayment, 503, "Retry-After", now.Add(30*time.Second).Format(http.TimeFormat))))
	short, cancel := context.WithDeadline(callCtx(opGetPayment, 503, "Retry-After", "10"), now.Add(5*time.Second))
	defer cancel()
	assert.False(t, retry(short), "more than the context has left")
	short2, cancel2 := context.WithDeadline(callCtx(opGetPayment, 503, "Retry-After", "2"), now.Add(5*time.Second))
	defer cancel2()
	assert.True(t, retry(short2))

	cancelled, stop := context.WithCancel(callCtx(opGetPayment, 503))
	stop()
	got, err := c.checkRetry(cancelled, nil, nil)
	assert.False(t, got)
	assert.ErrorIs(t, err, context.Canceled)
	// A definite answer is never turned into the context's error.
	got, err = c.checkRetry(context.WithValue(cancelled, callKey{}, &call{op: opCreatePayment, log: []attempt{{n: 1, status: 201}}}), nil, nil)
	assert.False(t, got)
	assert.NoError(t, err)
}

// TestDebugLogMasksCardNumberInExtID: an ext_id made of a card number (or
// holding one, however escaped in the path) is masked in the debug log's
// path, as anywhere else a log shows one.
func TestDebugLogMasksCardNumberInExtID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ extID, wantPath string }{
		{"4111111111111111", "/v1/payments/by-ext-id/************1111"},
		{"order-4111111111111111", "/v1/payments/by-ext-id/order-************1111"},
		{"4111 1111 1111 1111", "/v1/payments/by-ext-id/****%20****%20****%201111"},
		{"order-1001", "/v1/payments/by-ext-id/order-1001"},
	} {
		var logs TestLog
		c, rec := mockClient(t, 404, `{"error":"PAY_006","message":"not found"}`, WithLogger(logs.Logger()))
		_, err := c.GetPaymentByExtID(ctx, tc.extID)
		require.ErrorIs(t, err, ErrPaymentNotFound)
		require.Equal(t, 1, rec.count(), "the call reached the wire")
		var line struct{ Msg, Path string }
		for l := range strings.Lines(logs.String()) {
			if strings.Contains(l, `"paykit: attempt"`) {
				require.NoError(t, json.Unmarshal([]byte(l), &line))
			}
		}
		assert.Equal(t, tc.wantPath, line.Path, "%q", tc.extID)
		assert.False(t, strings.Contains(logs.String(), "41111111") || strings.Contains(logs.String(), "4111%201111"),
			"%q: the log shows the card number", tc.extID)
	}
}

// TestTransportErrorMasksCardNumberInExtID: net/http's error names the
// URL; the call's error masks a card number in its ext_id.
func TestTransportErrorMasksCardNumberInExtID(t *testing.T) {
	t.Parallel()
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(httpmock.NewErrorResponder(errors.New("connection reset")))
	c, err := NewClient(testBase, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: mt}), WithMaxRetries(0))
	require.NoError(t, err)
	for _, extID := range []string{"order-4111111111111111", "4111 1111 1111 1111"} {
		_, err = c.GetPaymentByExtID(ctx, extID)
		require.ErrorContains(t, err, "connection reset")
		assert.Contains(t, err.Error(), "/v1/payments/by-ext-id/")
		assert.Contains(t, err.Error(), "1111\"", "the last four digits stay")
		assert.False(t, strings.Contains(err.Error(), "41111111") || strings.Contains(err.Error(), "4111%201111"),
			"%q: the error shows the card number", extID)
	}
}
