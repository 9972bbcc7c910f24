package paykit

import (
	"context"
	"net/http"
	"sync"
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
