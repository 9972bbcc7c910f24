package paykit_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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

// recordingObserver writes one line per event, with the call depth it
// finds in the context (CallStart derives a context one level deeper), so
// a test can assert order and nesting in one comparison.
type recordingObserver struct {
	name   string
	mu     *sync.Mutex
	events *[]string
}

type depthKey struct{ name string }

func depth(ctx context.Context, name string) int { d, _ := ctx.Value(depthKey{name}).(int); return d }

func (o recordingObserver) add(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	*o.events = append(*o.events, o.name+" "+fmt.Sprintf(format, args...))
}

func (o recordingObserver) CallStart(ctx context.Context, c *paykit.CallInfo) context.Context {
	d := depth(ctx, o.name) + 1
	o.add("call %d %s %s %s", d, c.Operation, c.Method, c.Route)
	return context.WithValue(ctx, depthKey{o.name}, d)
}

func (o recordingObserver) AttemptStart(ctx context.Context, a *paykit.AttemptInfo) context.Context {
	o.add("attempt %d %s #%d", depth(ctx, o.name), a.Call.Operation, a.Attempt)
	return ctx
}

func (o recordingObserver) AttemptEnd(ctx context.Context, a *paykit.AttemptInfo) {
	errText := ""
	if a.Err != nil {
		errText = " err"
	}
	o.add("attempt-end %d %s #%d %d %s%s", depth(ctx, o.name), a.Call.Operation, a.Attempt, a.StatusCode, a.Code, errText)
}

func (o recordingObserver) RetryWait(ctx context.Context, w *paykit.RetryInfo) {
	o.add("wait %d %s after #%d", depth(ctx, o.name), w.Call.Operation, w.Attempt)
}

func (o recordingObserver) CallEnd(ctx context.Context, e *paykit.CallEndInfo) {
	o.add("end %d %s %s attempts=%d status=%d code=%s", depth(ctx, o.name), e.Call.Operation, e.Outcome, e.Attempts, e.StatusCode, e.Code)
}

func observed(t *testing.T, names ...string) (*itEnv, *[]string) {
	t.Helper()
	var mu sync.Mutex
	events := &[]string{}
	var opts []paykit.Option
	for _, n := range names {
		opts = append(opts, paykit.WithObserver(recordingObserver{name: n, mu: &mu, events: events}))
	}
	return newEnv(t, sandbox.Config{}, opts...), events
}

func TestObserverSeesCallsAttemptsRetriesAndOutcomes(t *testing.T) {
	t.Parallel()
	t.Run("plain call", func(t *testing.T) {
		t.Parallel()
		e, events := observed(t, "o")
		p := e.pay(t, "obs-1", "500")
		*events = nil
		_, err := e.c.GetPayment(bg, p.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{
			"o call 1 GetPayment GET /v1/payments/{id}",
			"o attempt 1 GetPayment #1",
			"o attempt-end 1 GetPayment #1 200 ",
			"o end 1 GetPayment success attempts=1 status=200 code=",
		}, *events)
	})
	t.Run("retried after error_before", func(t *testing.T) {
		t.Parallel()
		e, events := observed(t, "o")
		require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/balance", Mode: sandbox.FaultErrorBefore, Count: 1}))
		_, err := e.c.GetBalance(bg)
		require.NoError(t, err)
		assert.Equal(t, []string{
			"o call 1 GetBalance GET /v1/balance",
			"o attempt 1 GetBalance #1",
			"o attempt-end 1 GetBalance #1 500 " + sandbox.DefaultFaultCode,
			"o wait 1 GetBalance after #1",
			"o attempt 1 GetBalance #2",
			"o attempt-end 1 GetBalance #2 200 ",
			"o end 1 GetBalance success attempts=2 status=200 code=",
		}, *events)
	})
	t.Run("create reconciled after drop_after: the read-back is a call nested in it", func(t *testing.T) {
		t.Parallel()
		e, events := observed(t, "o")
		require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payments", Mode: sandbox.FaultDropAfter, Count: 1}))
		_, err := e.c.CreatePayment(bg, paykit.CreatePaymentParams{ExtID: "obs-2", Amount: dec("700")})
		require.NoError(t, err)
		assert.Equal(t, []string{
			"o call 1 CreatePayment POST /v1/payments",
			"o attempt 1 CreatePayment #1",
			"o attempt-end 1 CreatePayment #1 0  err",
			"o wait 1 CreatePayment after #1",
			"o attempt 1 CreatePayment #2",
			"o attempt-end 1 CreatePayment #2 409 PAY_003",
			"o call 2 GetPaymentByExtID GET /v1/payments/by-ext-id/{extId}",
			"o attempt 2 GetPaymentByExtID #1",
			"o attempt-end 2 GetPaymentByExtID #1 200 ",
			"o end 2 GetPaymentByExtID success attempts=1 status=200 code=",
			"o end 1 CreatePayment reconciled attempts=2 status=409 code=PAY_003",
		}, *events)
	})
	t.Run("transfer ending in an unknown outcome", func(t *testing.T) {
		t.Parallel()
		e, events := observed(t, "o")
		require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/transfers", Mode: sandbox.FaultDropAfter, Count: 1}))
		_, err := e.c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "term_sandbox_main", ToTerminalID: "term_sandbox_reserve", Amount: dec("1")})
		require.ErrorIs(t, err, paykit.ErrUnknownOutcome)
		assert.Equal(t, "o end 1 CreateTransfer unknown_outcome attempts=1 status=0 code=", (*events)[len(*events)-1])
	})
	t.Run("business error", func(t *testing.T) {
		t.Parallel()
		e, events := observed(t, "o")
		_, err := e.c.CreateTransfer(bg, paykit.CreateTransferParams{FromTerminalID: "term_sandbox_main", ToTerminalID: "nope", Amount: dec("1")})
		require.ErrorIs(t, err, paykit.ErrTerminalNotFound)
		assert.Equal(t, "o end 1 CreateTransfer business_error attempts=1 status=404 code=TRF_002", (*events)[len(*events)-1])
	})
	t.Run("routes never carry ids", func(t *testing.T) {
		t.Parallel()
		e, events := observed(t, "o")
		p := e.pay(t, "secret-order-77", "500")
		_, _ = e.c.GetPaymentByExtID(bg, "secret-order-77")
		_, _ = e.c.CancelPayment(bg, p.ID)
		for _, ev := range *events {
			assert.NotContains(t, ev, p.ID)
			assert.NotContains(t, ev, "secret-order-77")
		}
	})
}

func TestObserversCompose(t *testing.T) {
	t.Parallel()
	e, events := observed(t, "a", "b")
	_, err := e.c.GetBalance(bg)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"a call 1 GetBalance GET /v1/balance", "b call 1 GetBalance GET /v1/balance",
		"a attempt 1 GetBalance #1", "b attempt 1 GetBalance #1",
		"b attempt-end 1 GetBalance #1 200 ", "a attempt-end 1 GetBalance #1 200 ",
		"b end 1 GetBalance success attempts=1 status=200 code=", "a end 1 GetBalance success attempts=1 status=200 code=",
	}, *events, "starts first to last, ends last to first, like nested middleware")
	_, err = paykit.NewClient("https://api.example", "pk", paykit.HMACSigner("s"), paykit.WithObserver(nil))
	require.Error(t, err)
}

// CallInfo carries what a redacted url.full needs.
func TestObserverCallInfoServer(t *testing.T) {
	t.Parallel()
	var got *paykit.CallInfo
	obs := callInfoGrabber(func(c *paykit.CallInfo) { got = c })
	c, err := paykit.NewClient("https://api.example/base/", "pk", paykit.HMACSigner("s"), paykit.WithObserver(obs),
		paykit.WithHTTPClient(&http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}, nil
		})}))
	require.NoError(t, err)
	_, _ = c.GetBalance(bg)
	require.NotNil(t, got)
	assert.Equal(t, "https", got.Scheme)
	assert.Equal(t, "api.example", got.Host)
	assert.Equal(t, 443, got.Port)
	assert.Equal(t, "/base", got.BasePath)
	assert.True(t, strings.HasPrefix(got.Route, "/v1/"))
}

type callInfoGrabber func(*paykit.CallInfo)

func (g callInfoGrabber) CallStart(ctx context.Context, c *paykit.CallInfo) context.Context {
	g(c)
	return ctx
}
func (callInfoGrabber) AttemptStart(ctx context.Context, _ *paykit.AttemptInfo) context.Context {
	return ctx
}
func (callInfoGrabber) AttemptEnd(context.Context, *paykit.AttemptInfo) {}
func (callInfoGrabber) RetryWait(context.Context, *paykit.RetryInfo)    {}
func (callInfoGrabber) CallEnd(context.Context, *paykit.CallEndInfo)    {}

// panicky panics in every hook.
type panicky struct{}

func (panicky) CallStart(context.Context, *paykit.CallInfo) context.Context {
	panic("CallStart 4111111111111111")
}

func (panicky) AttemptStart(context.Context, *paykit.AttemptInfo) context.Context {
	panic("AttemptStart")
}

func (panicky) AttemptEnd(context.Context, *paykit.AttemptInfo) { panic("AttemptEnd") }

func (panicky) RetryWait(context.Context, *paykit.RetryInfo) { panic("RetryWait") }

func (panicky) CallEnd(context.Context, *paykit.CallEndInfo) { panic("CallEnd") }

// An Observer that panics does not turn a created payout into a panic with
// no outcome: the call returns its payout, and the panic is logged once.
func TestPanickingObserverDoesNotLoseTheCall(t *testing.T) {
	t.Parallel()
	const payoutID = "0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2d"
	var logs paykit.TestLog
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(502) // a retry, so RetryWait runs too
			return
		}
		w.WriteHeader(201)
		io.WriteString(w, `{"id":"`+payoutID+`","ext_id":"po-1","amount":5,"method":"sbp","requisites":"+79001234567",`+
			`"holder_name":"A B","bank":"","status":"pending"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := paykit.NewClient(srv.URL, "key", paykit.HMACSigner("secret"), paykit.WithRetryWait(time.Millisecond, 5*time.Millisecond),
		paykit.WithObserver(panicky{}), paykit.WithLogger(logs.Logger()))
	require.NoError(t, err)
	p, err := c.CreatePayout(context.Background(), paykit.CreatePayoutParams{ExtID: "po-1", Amount: decimal.RequireFromString("5"),
		Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "A B"})
	require.NoError(t, err)
	assert.Equal(t, payoutID, p.ID)
	assert.Equal(t, int32(2), calls.Load(), "the 502 was retried")
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "panicked"), out)
	assert.NotContains(t, out, "4111111111111111")
}

// Each observer's hooks are recovered on their own: one that panics in
// every hook costs the observers after it none of theirs.
func TestPanickingObserverSkipsNoOther(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	events := &[]string{}
	e := newEnv(t, sandbox.Config{}, paykit.WithObserver(panicky{}),
		paykit.WithObserver(recordingObserver{name: "b", mu: &mu, events: events}),
		paykit.WithLogger(slog.New(slog.DiscardHandler)))
	_, err := e.c.GetBalance(bg)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"b call 1 GetBalance GET /v1/balance", "b attempt 1 GetBalance #1",
		"b attempt-end 1 GetBalance #1 200 ", "b end 1 GetBalance success attempts=1 status=200 code=",
	}, *events)
}
