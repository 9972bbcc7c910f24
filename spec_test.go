package paykit

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	assert.ElementsMatch(t, spec.PaymentMethods, asStrings(paymentMethods...))
	assert.ElementsMatch(t, spec.Countries, asStrings(countries...))
	assert.ElementsMatch(t, spec.PayoutMethods, asStrings(payoutMethods...))
}

// asStrings gives a string enumeration's values as plain strings, the
// form internal/spec holds them in.
func asStrings[T ~string](xs ...T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
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

// A server inventing a fresh, well-formed code on every answer cannot make
// the codes an Observer sees (a metric label) unbounded; the spec's codes
// and the sandbox's pass as they are, and the *Error keeps what was said.
func TestObserverCodesStayBounded(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	known := []string{"PAY_006", "AUTH_001", "SANDBOX_BUSY"}
	rec := &codeRecorder{}
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1))
		code := fmt.Sprintf("ZZ_%d", i)
		if i <= len(known) {
			code = known[i-1]
		}
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":%q,"message":"x"}`, code)
	}), WithMaxRetries(0), WithObserver(rec))
	for i := 1; i <= 300; i++ {
		_, err := c.GetBalance(ctx)
		var apiErr *Error
		require.ErrorAs(t, err, &apiErr)
		if i > len(known) {
			assert.Equal(t, fmt.Sprintf("ZZ_%d", i), apiErr.Code, "the error keeps the code answered")
		}
	}
	want := map[string]int{"PAY_006": 1, "AUTH_001": 1, "SANDBOX_BUSY": 1, "OTHER": 297}
	seen := map[string]map[string]int{"attempt": {}, "end": {}}
	for _, line := range rec.all() {
		// codeRecorder's lines are "attempt code=C err=…" and "end code=C err=…".
		kind, rest, _ := strings.Cut(line, " code=")
		code, _, _ := strings.Cut(rest, " err=")
		require.Contains(t, seen, kind, line)
		seen[kind][code]++
	}
	assert.Equal(t, want, seen["attempt"])
	assert.Equal(t, want, seen["end"])
	assert.True(t, slices.Contains(sandboxCodes, invalidCode))
	assert.Equal(t, "INVALID_CODE", observedCode("INVALID_CODE"))
	assert.Equal(t, "", observedCode(""))
}
