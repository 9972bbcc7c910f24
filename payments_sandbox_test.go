package paykit_test

// Tests of payments (payments.go) through the public API against the
// sandbox: validity and expiry.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnsaidValidityAndTimeout: the spec shows neither the span until
// valid_until nor the moment of the timeout cancellation. ValidUntil, as the
// server sends it, is the authority: the SDK neither assumes a span nor
// refuses a late call itself; the server answers it (PAY_008 from the
// sandbox once its clock reaches valid_until, the payment reading
// CANCELLED).
func TestUnsaidValidityAndTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("span is the server's", func(t *testing.T) {
		t.Parallel()
		for _, ttl := range []time.Duration{0, 7 * time.Minute, 48 * time.Hour} {
			e := newEnv(t, sandbox.Config{PaymentTTL: ttl})
			p := e.pay(t, "span", "1000")
			want := ttl
			if ttl == 0 {
				want = sandbox.DefaultPaymentTTL // the sandbox's choice: 20 minutes
			}
			assert.Equal(t, want, p.ValidUntil.Sub(p.CreatedAt), "TTL %s", ttl)
		}
	})

	t.Run("late confirm: PAY_008, payment CANCELLED", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		early, late := e.pay(t, "early", "1000"), e.pay(t, "late", "1001")
		e.sb.Advance(late.ValidUntil.Sub(e.sb.Now()) - time.Second)
		got, err := e.c.ConfirmPayment(ctx, early.ID, nil)
		require.NoError(t, err, "a second before valid_until")
		assert.Equal(t, paykit.PaymentStatusProcessing, got.Status)

		e.sb.Advance(time.Second) // the clock reaches valid_until
		_, err = e.c.ConfirmPayment(ctx, late.ID, nil)
		requireAPIError(t, err, paykit.ErrPaymentNotConfirmable, "PAY_008", http.StatusBadRequest)
		assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome)
		assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, late.ID))
		_, err = e.c.CancelPayment(ctx, late.ID)
		requireAPIError(t, err, paykit.ErrPaymentNotCancellable, "PAY_007", http.StatusBadRequest)
	})

	t.Run("the SDK does not expire payments itself", func(t *testing.T) {
		t.Parallel()
		// valid_until long past by any client clock: the call is still sent.
		expired := strings.Replace(unsaidPaymentJSON("PROCESSING"), "2025-03-01T12:20:00Z", "2000-01-01T00:00:00Z", 1)
		c, log := fakeAPI(t, map[string]answer{"POST /v1/payments/" + unsaidPaymentID + "/confirm": {http.StatusOK, expired}})
		p, err := c.ConfirmPayment(ctx, unsaidPaymentID, nil)
		require.NoError(t, err)
		assert.Equal(t, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), p.ValidUntil)
		assert.Equal(t, 1, log.count("POST", "/v1/payments/"+unsaidPaymentID+"/confirm"))
	})
}
