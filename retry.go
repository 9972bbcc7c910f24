package paykit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryClass says when an operation may be sent again. The service has no
// idempotency keys, so what is safe to repeat depends on what the operation
// does; see the README's "Retries and idempotency" table.
type retryClass int

const (
	// classRead: GETs. Repeating them changes nothing.
	classRead retryClass = iota
	// classCreate: creates keyed by the merchant's ext_id. A repeat cannot
	// create a second resource; it answers PAY_003, which the SDK reconciles
	// by reading the resource back by ext_id.
	classCreate
	// classStateChange: payment transitions. A repeat of a transition that
	// already happened answers a "wrong state" error, which the SDK
	// reconciles by reading the payment back.
	classStateChange
	// classMoneyMove: transfers and withdrawals. Nothing makes a repeat safe,
	// so they are re-sent only when the failed attempt provably sent nothing.
	classMoneyMove
)

// operation is one endpoint and its retry policy.
type operation struct {
	name   string
	method string
	// route is the path template, for telemetry: never a concrete id.
	route string
	class retryClass
	// doneCode is the error a retried attempt answers when an earlier,
	// unanswered attempt already did the work.
	doneCode string
	// check tells the merchant how to learn the outcome of a money move
	// whose outcome is unknown.
	check string
}

// The retry table: every endpoint of the API, its class, and the code that
// means "already done". It is the only place where retry policy is decided
// per operation.
var (
	opCreatePayment     = &operation{name: "CreatePayment", method: http.MethodPost, route: "/v1/payments", class: classCreate, doneCode: "PAY_003"}
	opGetPayment        = &operation{name: "GetPayment", method: http.MethodGet, route: "/v1/payments/{id}", class: classRead}
	opGetPaymentByExtID = &operation{name: "GetPaymentByExtID", method: http.MethodGet, route: "/v1/payments/by-ext-id/{extId}", class: classRead}
	opConfirmPayment    = &operation{name: "ConfirmPayment", method: http.MethodPost, route: "/v1/payments/{id}/confirm", class: classStateChange, doneCode: "PAY_008"}
	opCancelPayment     = &operation{name: "CancelPayment", method: http.MethodPost, route: "/v1/payments/{id}/cancel", class: classStateChange, doneCode: "PAY_007"}
	opOpenDispute       = &operation{name: "OpenDispute", method: http.MethodPost, route: "/v1/payments/{id}/dispute", class: classStateChange, doneCode: "DIS_002"}
	opCancelDispute     = &operation{name: "CancelDispute", method: http.MethodPost, route: "/v1/payments/{id}/dispute/cancel", class: classStateChange, doneCode: "DIS_003"}
	opCreatePayout      = &operation{name: "CreatePayout", method: http.MethodPost, route: "/v1/payouts", class: classCreate, doneCode: "PAY_003"}
	opGetPayout         = &operation{name: "GetPayout", method: http.MethodGet, route: "/v1/payouts/{id}", class: classRead}
	opGetPayoutByExtID  = &operation{name: "GetPayoutByExtID", method: http.MethodGet, route: "/v1/payouts/by-ext-id/{extId}", class: classRead}
	opListPayouts       = &operation{name: "ListPayouts", method: http.MethodGet, route: "/v1/payouts", class: classRead}
	opListTerminals     = &operation{name: "ListTerminals", method: http.MethodGet, route: "/v1/terminals", class: classRead}
	opGetBalance        = &operation{name: "GetBalance", method: http.MethodGet, route: "/v1/balance", class: classRead}
	opListBanks         = &operation{name: "ListBanks", method: http.MethodGet, route: "/v1/banks", class: classRead}
	opCreateTransfer    = &operation{name: "CreateTransfer", method: http.MethodPost, route: "/v1/transfers", class: classMoneyMove,
		check: "it was not re-sent, to avoid moving money twice: compare both terminals' balances (ListTerminals) with what you expect before trying again"}
	opCreateWithdrawal = &operation{name: "CreateWithdrawal", method: http.MethodPost, route: "/v1/withdrawals", class: classMoneyMove,
		check: "it was not re-sent, to avoid moving money twice: check the terminal's frozen balance (ListTerminals) and your wallet before trying again"}
	opGetWithdrawal    = &operation{name: "GetWithdrawal", method: http.MethodGet, route: "/v1/withdrawals/{id}", class: classRead}
	opGetWithdrawalFee = &operation{name: "GetWithdrawalFee", method: http.MethodGet, route: "/v1/withdrawals/fee", class: classRead}
	// opCheckCredentials is CheckCredentials's signed read (GET /v1/balance).
	opCheckCredentials = &operation{name: "CheckCredentials", method: http.MethodGet, route: "/v1/balance", class: classRead}
)

// maxRetryAfter is the longest Retry-After the SDK sleeps through. A server
// asking for more is treated as a refusal, answered at once, so a checkout
// is not held for minutes inside a library call.
const maxRetryAfter = 60 * time.Second

// checkRetry is retryablehttp's CheckRetry. It sees only the context and
// the attempt's outcome, so the operation arrives through the context. It
// decides whether to try again and, when it does, how long to wait first
// (kept in the call state for prepareRetry): a wait that would outlast the
// context's deadline is not started, so the answer in hand is returned at
// once instead of a bare "context deadline exceeded" after a futile sleep.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	st := stateFrom(ctx)
	if err != nil {
		if !retryableTransportError(err) {
			return false, nil
		}
		// A money move is re-sent only after a failure positively known to
		// have happened before anything was sent (dial, DNS, TLS handshake,
		// proxy CONNECT); a connection that failed later, or a transport
		// that does not say, may have delivered it.
		if st.op.class == classMoneyMove && !st.lastPreSend {
			return false, nil
		}
	} else if !retryableStatus(st.op.class, resp.StatusCode, st.lastCode) {
		return false, nil
	}
	if st.attempts > c.http.RetryMax {
		return false, nil
	}
	wait, ok := c.backoff(st.attempts, resp)
	if !ok {
		return false, nil
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(c.now()) < wait {
		return false, nil
	}
	st.wait = wait
	return true, nil
}

// prepareRetry is retryablehttp's PrepareRetry: it tells the observer,
// waits the time checkRetry chose (retryablehttp's own Backoff is zero, as
// the wait depends on the call), stopping at once when the context ends,
// and signs the next attempt afresh, so a signer that covers a timestamp or
// nonce works.
func (c *Client) prepareRetry(req *http.Request) error {
	ctx := req.Context()
	st := stateFrom(ctx)
	if st.obs != nil {
		st.obs.RetryWait(ctx, &RetryInfo{Call: st.call, Attempt: st.attempts, Wait: st.wait})
	}
	if st.wait > 0 {
		t := time.NewTimer(st.wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return c.sign(req)
}

// noBackoff is retryablehttp's Backoff: checkRetry chose the wait and
// prepareRetry sleeps it.
func noBackoff(time.Duration, time.Duration, int, *http.Response) time.Duration { return 0 }

// retryableStatus applies the class's rule to an HTTP answer. Business
// errors are never retried: they would only be refused again.
func retryableStatus(class retryClass, status int, code string) bool {
	switch {
	case status == http.StatusTooManyRequests:
		// PAY_005 is a business refusal; a bare 429 is a rate limiter.
		return class == classRead && code == ""
	case status == http.StatusNotImplemented:
		return false
	case status >= 500:
		// A money move that got a 5xx has reached the server: it may have
		// been applied.
		return class != classMoneyMove && code != "PAY_004"
	}
	return false
}

// apiCode reads the error code of an error body, "" if none.
func apiCode(body []byte) string {
	var wire struct {
		Error flexString `json:"error"`
	}
	if json.Unmarshal(body, &wire) != nil {
		return ""
	}
	return truncate(string(wire.Error), 64)
}

// retryableTransportError is false for failures that a repeat cannot cure:
// a certificate the client does not trust, a body over the cap, a
// transport that answered nothing at all.
func retryableTransportError(err error) bool {
	return !certificateError(err) && !errors.Is(err, errResponseTooLarge) && !errors.Is(err, errNoResponse)
}

// certificateError reports a server certificate the client refused: no
// repeat cures it, and it happens in the handshake, before anything is sent.
func certificateError(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verify)
}

// preSendError reports whether err is positively one that happens before a
// request is written: a failed dial (connection refused, unreachable), a
// DNS failure, a failed TLS handshake, or a failed connection to a proxy.
// Anything else, including an error no transport explains, may have come
// after the request left.
func preSendError(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var recordHeader tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &dnsErr):
		return true
	case errors.As(err, &opErr) && (opErr.Op == "dial" || opErr.Op == "proxyconnect"):
		return true
	case errors.As(err, &recordHeader), errors.As(err, &alert), certificateError(err):
		return true
	}
	// net/http's handshake timeout has no exported type.
	return strings.Contains(err.Error(), "TLS handshake timeout")
}

// backoff is the wait before retrying after the attempt-th attempt:
// exponential with full jitter between min and min·2ⁿ (capped at max), and
// never shorter than a Retry-After the server sent with any status. ok is
// false when the server asks for more than maxRetryAfter: a refusal,
// answered at once rather than holding a checkout for minutes.
func (c *Client) backoff(attempt int, resp *http.Response) (wait time.Duration, ok bool) {
	minWait, maxWait := c.http.RetryWaitMin, c.http.RetryWaitMax
	n := max(attempt-1, 0)
	ceil := maxWait
	if n < 32 {
		if d := minWait << n; d > 0 && d < maxWait {
			ceil = d
		}
	}
	wait = minWait
	if ceil > minWait {
		wait += rand.N(ceil - minWait + 1)
	}
	if resp != nil {
		if ra, ok := retryAfter(resp, c.now()); ok {
			if ra > maxRetryAfter {
				return 0, false
			}
			wait = max(wait, ra)
		}
	}
	return wait, true
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
// A number of seconds too large for any integer is a very long wait, not
// no wait at all.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs < 0 {
			return 0, false
		}
		if err != nil || secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		if d := at.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}
