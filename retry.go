package paykit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
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
	class  retryClass
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
	opCreatePayment     = &operation{name: "CreatePayment", method: http.MethodPost, class: classCreate, doneCode: "PAY_003"}
	opGetPayment        = &operation{name: "GetPayment", method: http.MethodGet, class: classRead}
	opGetPaymentByExtID = &operation{name: "GetPaymentByExtID", method: http.MethodGet, class: classRead}
	opConfirmPayment    = &operation{name: "ConfirmPayment", method: http.MethodPost, class: classStateChange, doneCode: "PAY_008"}
	opCancelPayment     = &operation{name: "CancelPayment", method: http.MethodPost, class: classStateChange, doneCode: "PAY_007"}
	opOpenDispute       = &operation{name: "OpenDispute", method: http.MethodPost, class: classStateChange, doneCode: "DIS_002"}
	opCancelDispute     = &operation{name: "CancelDispute", method: http.MethodPost, class: classStateChange, doneCode: "DIS_003"}
	opCreatePayout      = &operation{name: "CreatePayout", method: http.MethodPost, class: classCreate, doneCode: "PAY_003"}
	opGetPayout         = &operation{name: "GetPayout", method: http.MethodGet, class: classRead}
	opGetPayoutByExtID  = &operation{name: "GetPayoutByExtID", method: http.MethodGet, class: classRead}
	opListPayouts       = &operation{name: "ListPayouts", method: http.MethodGet, class: classRead}
	opListTerminals     = &operation{name: "ListTerminals", method: http.MethodGet, class: classRead}
	opGetBalance        = &operation{name: "GetBalance", method: http.MethodGet, class: classRead}
	opListBanks         = &operation{name: "ListBanks", method: http.MethodGet, class: classRead}
	opCreateTransfer    = &operation{name: "CreateTransfer", method: http.MethodPost, class: classMoneyMove,
		check: "compare both terminals' balances (ListTerminals) with what you expect"}
	opCreateWithdrawal = &operation{name: "CreateWithdrawal", method: http.MethodPost, class: classMoneyMove,
		check: "check the terminal's frozen balance (ListTerminals) and your wallet"}
	opGetWithdrawal    = &operation{name: "GetWithdrawal", method: http.MethodGet, class: classRead}
	opGetWithdrawalFee = &operation{name: "GetWithdrawalFee", method: http.MethodGet, class: classRead}
	// opCheckCredentials is CheckCredentials's signed read (GET /v1/balance).
	opCheckCredentials = &operation{name: "CheckCredentials", method: http.MethodGet, class: classRead}
)

// maxRetryAfter is the longest Retry-After the SDK sleeps through. A server
// asking for more is treated as a refusal, answered at once, so a checkout
// is not held for minutes inside a library call.
const maxRetryAfter = 60 * time.Second

// checkRetry is retryablehttp's CheckRetry. It sees only the context and
// the attempt's outcome, so the operation arrives through the context.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	st := stateFrom(ctx)
	if err != nil {
		if !retryableTransportError(err) {
			return false, nil
		}
		// A money move is re-sent only if no connection was ever obtained
		// (dial, DNS, TLS handshake failed): only then provably nothing
		// reached the server.
		return !(st.op.class == classMoneyMove && st.gotConn.Load()), nil
	}
	if !retryableStatus(st.op.class, resp, st.last) {
		return false, nil
	}
	if wait, ok := retryAfter(resp, c.now()); ok {
		if wait > maxRetryAfter {
			return false, nil
		}
		if deadline, ok := ctx.Deadline(); ok && deadline.Sub(c.now()) < wait {
			return false, nil
		}
	}
	return true, nil
}

// retryableStatus applies the class's rule to an HTTP answer. Business
// errors are never retried: they would only be refused again.
func retryableStatus(class retryClass, resp *http.Response, body []byte) bool {
	switch status := resp.StatusCode; {
	case status == http.StatusTooManyRequests:
		// PAY_005 is a business refusal; a bare 429 is a rate limiter.
		return class == classRead && apiCode(body) == ""
	case status == http.StatusNotImplemented:
		return false
	case status >= 500:
		// A money move that got a 5xx has reached the server: it may have
		// been applied.
		return class != classMoneyMove && apiCode(body) != "PAY_004"
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
	return string(wire.Error)
}

// retryableTransportError is false for failures that a repeat cannot cure:
// a certificate the client does not trust, a body over the cap.
func retryableTransportError(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname),
		errors.As(err, &invalid), errors.As(err, &verify):
		return false
	case errors.Is(err, errResponseTooLarge):
		return false
	}
	return true
}

// backoff is retryablehttp's Backoff: exponential with full jitter between
// min and min·2ⁿ (capped at max), and never shorter than a Retry-After the
// server sent with any status. checkRetry has already refused waits that are
// too long, so whatever this returns is slept, interruptibly, by the caller.
func (c *Client) backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	ceil := maxWait
	if attempt < 32 {
		if d := minWait << attempt; d > 0 && d < maxWait {
			ceil = d
		}
	}
	wait := minWait
	if ceil > minWait {
		wait += rand.N(ceil - minWait + 1)
	}
	if resp != nil {
		if ra, ok := retryAfter(resp, c.now()); ok && ra > wait {
			wait = ra
		}
	}
	return wait
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
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
