package paykit

import (
	"context"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sequence answers GET /v1/payments/{id} (or a payout) with the next of
// its answers, then the last one again.
type sequence struct {
	mu      sync.Mutex
	answers []func() (int, string)
	n       int
	onRead  func(n int)
}

func (s *sequence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := min(s.n, len(s.answers)-1)
	s.n++
	n := s.n
	s.mu.Unlock()
	status, body := s.answers[i]()
	if status == 429 {
		w.Header().Set("Retry-After", "0")
	}
	w.WriteHeader(status)
	w.Write([]byte(body))
	if s.onRead != nil {
		s.onRead(n)
	}
}

func (s *sequence) reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

var fastWait = WaitOptions{MinInterval: time.Millisecond, MaxInterval: 2 * time.Millisecond}

func TestWaitPaymentUntilSettled(t *testing.T) {
	t.Parallel()
	seq := &sequence{answers: []func() (int, string){
		fixed(200, paymentBody(paymentID, "order-A", "100", "PROCESSING")),
		fixed(503, ``),
		fixed(429, ``),
		fixed(200, paymentBody(paymentID, "order-A", "100", "DISPUTE")),
		fixed(200, paymentBody(paymentID, "order-A", "100", "COMPLETED")),
	}}
	c, _ := serverClient(t, seq, WithMaxRetries(0))
	p, err := c.WaitPayment(ctx, paymentID, fastWait)
	require.NoError(t, err)
	assert.Equal(t, PaymentStatusCompleted, p.Status)
	assert.Equal(t, 5, seq.reads(), "a 503 and a bare 429 are waited through")
}

func TestWaitPaymentReturnsTheLastReadWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	wctx, cancel := context.WithCancel(ctx)
	seq := &sequence{answers: []func() (int, string){fixed(200, paymentBody(paymentID, "order-A", "100", "PROCESSING"))},
		onRead: func(n int) {
			if n == 3 {
				cancel()
			}
		}}
	c, _ := serverClient(t, seq)
	p, err := c.WaitPayment(wctx, paymentID, fastWait)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, p, "the last read comes back")
	assert.Equal(t, PaymentStatusProcessing, p.Status)
}

func TestWaitPaymentStopsOnADefiniteError(t *testing.T) {
	t.Parallel()
	seq := &sequence{answers: []func() (int, string){
		fixed(200, paymentBody(paymentID, "order-A", "100", "PENDING")),
		fixed(404, `{"error":"PAY_006","message":"payment not found"}`),
	}}
	c, _ := serverClient(t, seq)
	p, err := c.WaitPayment(ctx, paymentID, WaitOptions{MinInterval: time.Millisecond, MaxInterval: time.Millisecond})
	require.ErrorIs(t, err, ErrPaymentNotFound)
	require.NotNil(t, p)
	assert.Equal(t, PaymentStatusPending, p.Status)
	assert.Equal(t, 2, seq.reads())

	_, err = c.WaitPayment(ctx, "not-a-uuid", WaitOptions{})
	require.ErrorIs(t, err, ErrInvalidParameters)
	assert.Equal(t, 2, seq.reads(), "nothing sent for a bad id")
}

func TestWaitPayoutUntilFinal(t *testing.T) {
	t.Parallel()
	payout := func(status string) func() (int, string) {
		return fixed(200, `{"id":"`+payoutID+`","ext_id":"po-1","amount":5,"status":"`+status+`"}`)
	}
	seq := &sequence{answers: []func() (int, string){payout("pending"), payout("processing"), payout("refunding"), payout("failed")}}
	c, _ := serverClient(t, seq)
	p, err := c.WaitPayout(ctx, payoutID, fastWait)
	require.NoError(t, err)
	assert.Equal(t, PayoutStatusFailed, p.Status)
	assert.Equal(t, 4, seq.reads(), "an unknown status is waited on")
}

func TestWaitPauses(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	assert.Equal(t, time.Second, nextPause(time.Second, time.Minute, time.Time{}, now), "not PENDING: the interval")
	assert.Equal(t, time.Minute, nextPause(time.Second, time.Minute, now.Add(20*time.Minute), now),
		"PENDING far from expiry: MaxInterval")
	assert.Equal(t, 11*time.Second, nextPause(time.Second, time.Minute, now.Add(10*time.Second), now),
		"PENDING near expiry: right after it")
	assert.Equal(t, time.Second, nextPause(time.Second, time.Minute, now.Add(-time.Minute), now),
		"expired: the interval, until the service cancels it")
	e := c429RetryAfter(t)
	assert.Equal(t, 7*time.Second, e.retryAfter, "the waiters see Retry-After")
}

func c429RetryAfter(t *testing.T) *Error {
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(429)
	}), WithMaxRetries(0))
	_, err := c.GetPayment(ctx, paymentID)
	var apiErr *Error
	require.ErrorAs(t, err, &apiErr)
	return apiErr
}

// A Retry-After far in the future, as an HTTP date or in seconds, is a long
// pause (cut short by ctx), never one that overflows into a spin of reads.
func TestWaitersHonourAFarRetryAfterWithoutSpinning(t *testing.T) {
	t.Parallel()
	for _, header := range []string{"Fri, 31 Dec 9999 23:59:59 GMT", "99999999999999999999", "9223372036"} {
		for name, wait := range map[string]func(context.Context, *Client) error{
			"WaitPayment": func(ctx context.Context, c *Client) error {
				_, err := c.WaitPayment(ctx, paymentID, WaitOptions{MinInterval: time.Millisecond})
				return err
			},
			"WaitPayout": func(ctx context.Context, c *Client) error {
				_, err := c.WaitPayout(ctx, payoutID, WaitOptions{MinInterval: time.Millisecond})
				return err
			},
		} {
			t.Run(name+" "+header, func(t *testing.T) {
				t.Parallel()
				var reads atomic.Int32
				c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					reads.Add(1)
					w.Header().Set("Retry-After", header)
					w.WriteHeader(503)
				}))
				wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
				start := time.Now()
				err := wait(wctx, c)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Less(t, time.Since(start), 5*time.Second, "the wait ends with ctx")
				assert.Equal(t, int32(1), reads.Load(),
					"one read, then a pause longer than ctx (no retry either: the header asks for more than a minute)")
			})
		}
	}
}

// A read whose status is null or missing says nothing about the payment's
// state: the waiter reads again rather than calling it settled.
func TestWaitPaymentReadsAgainWithoutAStatus(t *testing.T) {
	t.Parallel()
	seq := &sequence{answers: []func() (int, string){
		fixed(200, `{"id":"`+paymentID+`","ext_id":"order-A","amount":100,"status":null}`),
		fixed(200, `{"id":"`+paymentID+`","ext_id":"order-A","amount":100}`),
		fixed(200, paymentBody(paymentID, "order-A", "100", "COMPLETED")),
	}}
	c, _ := serverClient(t, seq)
	p, err := c.WaitPayment(ctx, paymentID, fastWait)
	require.NoError(t, err)
	assert.Equal(t, PaymentStatusCompleted, p.Status)
	assert.Equal(t, 3, seq.reads(), "no status is not settled")

	seq = &sequence{answers: []func() (int, string){
		fixed(200, `{"id":"`+payoutID+`","ext_id":"po-1","amount":5,"status":null}`),
		fixed(200, `{"id":"`+payoutID+`","ext_id":"po-1","amount":5}`),
		fixed(200, `{"id":"`+payoutID+`","ext_id":"po-1","amount":5,"status":"completed"}`),
	}}
	c, _ = serverClient(t, seq)
	po, err := c.WaitPayout(ctx, payoutID, fastWait)
	require.NoError(t, err)
	assert.Equal(t, PayoutStatusCompleted, po.Status)
	assert.Equal(t, 3, seq.reads(), "no status is not final")
}

// The interval grows from any positive start (half of 1ns is 0) and never
// overflows, whatever MaxInterval is.
func TestWaitIntervalGrowsFromAnyPositiveStart(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{1, 2, 3, time.Millisecond, time.Hour} {
		assert.Greater(t, grow(d, 2*time.Hour), d, "from %d", d)
	}
	assert.Equal(t, 2*time.Hour, grow(time.Hour+20*time.Minute, 2*time.Hour), "capped at MaxInterval")
	assert.Equal(t, time.Duration(math.MaxInt64), grow(math.MaxInt64-10, math.MaxInt64), "no overflow")
	assert.Equal(t, time.Duration(math.MaxInt64-1), grow(math.MaxInt64/4*3, math.MaxInt64-1), "no overflow")
	d := time.Duration(1)
	for range 60 {
		d = grow(d, time.Hour)
	}
	assert.Greater(t, d, 100*time.Millisecond, "1ns grows geometrically")

	// Over loopback: MinInterval 1ns makes a bounded number of reads in
	// 300ms, not one per round trip.
	seq := &sequence{answers: []func() (int, string){fixed(200, paymentBody(paymentID, "order-A", "100", "PROCESSING"))}}
	c, _ := serverClient(t, seq)
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := c.WaitPayment(wctx, paymentID, WaitOptions{MinInterval: 1, MaxInterval: time.Hour})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.LessOrEqual(t, seq.reads(), 100, "the pauses grew")
}
