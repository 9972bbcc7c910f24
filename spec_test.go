package paykit

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// The public limits and enumerations are internal/spec's, re-exported: one
// number in one place.
func TestPublicLimitsAreTheSpecs(t *testing.T) {
	t.Parallel()
	assert.True(t, MinPaymentAmount.Equal(dec(fmt.Sprint(spec.MinPaymentAmount))))
	assert.True(t, MaxPaymentAmount.Equal(dec(fmt.Sprint(spec.MaxPaymentAmount))))
	assert.Equal(t, spec.MaxExtIDLength, MaxExtIDLength)
	assert.Equal(t, spec.MaxAttachmentSize, MaxAttachmentSize)
	asStrings := func(v any) []string {
		var out []string
		switch v := v.(type) {
		case []PaymentMethod:
			for _, x := range v {
				out = append(out, string(x))
			}
		case []Country:
			for _, x := range v {
				out = append(out, string(x))
			}
		case []PayoutMethod:
			for _, x := range v {
				out = append(out, string(x))
			}
		}
		return out
	}
	assert.ElementsMatch(t, spec.PaymentMethods, asStrings(paymentMethods))
	assert.ElementsMatch(t, spec.Countries, asStrings(countries))
	assert.ElementsMatch(t, spec.PayoutMethods, asStrings(payoutMethods))
}

// Every code of the spec's table has its meaning: a sentinel of its own, or
// (PAY_001, SYS_001) one told by the HTTP status; and no sentinel is keyed
// by a code the spec does not have.
func TestEveryErrorCodeOfTheSpecHasItsSentinel(t *testing.T) {
	t.Parallel()
	for code := range codeSentinels {
		assert.True(t, spec.IsCode(code), "%s is not in the spec's table", code)
	}
	for _, row := range spec.ErrorCodes {
		e := &Error{Code: row.Code, HTTPStatus: row.HTTPStatus}
		require.NotNil(t, e.sentinel(), "%s (HTTP %d) has no meaning", row.Code, row.HTTPStatus)
		if _, ok := codeSentinels[row.Code]; !ok {
			assert.Contains(t, []string{"PAY_001", "SYS_001"}, row.Code, "only these are told by status")
		}
	}
}

// codeObserver collects the distinct codes an Observer is shown.
type codeObserver struct {
	mu       sync.Mutex
	attempts map[string]int
	ends     map[string]int
}

func (o *codeObserver) CallStart(ctx context.Context, _ *CallInfo) context.Context { return ctx }
func (o *codeObserver) AttemptStart(ctx context.Context, _ *AttemptInfo) context.Context {
	return ctx
}
func (o *codeObserver) RetryWait(context.Context, *RetryInfo) {}
func (o *codeObserver) AttemptEnd(_ context.Context, a *AttemptInfo) {
	o.mu.Lock()
	o.attempts[a.Code]++
	o.mu.Unlock()
}
func (o *codeObserver) CallEnd(_ context.Context, e *CallEndInfo) {
	o.mu.Lock()
	o.ends[e.Code]++
	o.mu.Unlock()
}

// A server inventing a fresh, well-formed code on every answer cannot make
// the codes an Observer sees (a metric label) unbounded; the spec's codes
// and the sandbox's pass as they are, and the *Error keeps what was said.
func TestObserverCodesStayBounded(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	known := []string{"PAY_006", "AUTH_001", "SANDBOX_BUSY"}
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1))
		code := fmt.Sprintf("ZZ_%d", i)
		if i <= len(known) {
			code = known[i-1]
		}
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":%q,"message":"x"}`, code)
	}), WithMaxRetries(0), WithObserver(&codeObserver{attempts: map[string]int{}, ends: map[string]int{}}))
	obs := c.obs.(observers).os[0].(*codeObserver)
	for i := 1; i <= 300; i++ {
		_, err := c.GetBalance(ctx)
		var apiErr *Error
		require.ErrorAs(t, err, &apiErr)
		if i > len(known) {
			assert.Equal(t, fmt.Sprintf("ZZ_%d", i), apiErr.Code, "the error keeps the code answered")
		}
	}
	want := map[string]int{"PAY_006": 1, "AUTH_001": 1, "SANDBOX_BUSY": 1, "OTHER": 297}
	assert.Equal(t, want, obs.attempts)
	assert.Equal(t, want, obs.ends)
	assert.True(t, slices.Contains(sandboxCodes, invalidCode))
	assert.Equal(t, "INVALID_CODE", observedCode("INVALID_CODE"))
	assert.Equal(t, "", observedCode(""))
}
