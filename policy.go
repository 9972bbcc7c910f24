package paykit

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// The policy of every call as data: the operation table, and the pure
// functions the call path in call.go asks (is this attempt worth
// repeating, how long to wait). No resource method decides any of it.

// retryClass says when an operation may be sent again: the service has no
// idempotency keys (docs/calls.md, "Retries and idempotency").
type retryClass uint8

const (
	classRead retryClass = iota // GETs
	// classCreate: keyed by ext_id, a repeat answers PAY_003, settled by
	// reading the resource back by ext_id.
	classCreate
	// classStateChange: a repeated payment transition answers "wrong
	// state", settled by reading the payment back.
	classStateChange
	// classMoneyMove: transfers, withdrawals, Client.Do's writes. Re-sent
	// only when the failed attempt provably sent nothing.
	classMoneyMove
)

// identity is what an answer must carry to be about the resource the call
// named: nothing (the zero value), the id in the path, or the ext_id in the
// path or body.
type identity uint8

const (
	_ identity = iota
	identID
	identExtID
)

// needs says which facts a write's answer must carry to be the resource at
// all: {} or {"error":"PAY_004"} decodes without error into an empty
// resource. A read needs only its identity, so a lean GET answer stays
// readable.
type needs uint8

const (
	needID needs = 1 << iota
	needExtID
	needAmount
	needStatus

	needPayment    = needID | needExtID | needAmount | needStatus
	needWithdrawal = needID | needAmount | needStatus
)

// operation is one endpoint and its policy: a row of the table below.
type operation struct {
	name, method string
	route        string // the path template: telemetry, settling reads
	class        retryClass
	// doneCode is what a retry answers when an earlier, unanswered attempt
	// did the work.
	doneCode string
	ident    identity
	needs    needs
	// settle reads back a lost or unusable answer; nil for reads and money
	// moves, whose advice says what to check instead.
	settle *operation
	advice string
}

// The operation table: every endpoint of the API and its whole policy.
var (
	opGetPayment        = &operation{name: "GetPayment", method: http.MethodGet, route: "/v1/payments/{id}", ident: identID}
	opGetPaymentByExtID = &operation{name: "GetPaymentByExtID", method: http.MethodGet, route: "/v1/payments/by-ext-id/{extId}", ident: identExtID}
	opCreatePayment     = &operation{name: "CreatePayment", method: http.MethodPost, route: "/v1/payments", class: classCreate, doneCode: spec.CodePAY003,
		ident: identExtID, needs: needPayment, settle: opGetPaymentByExtID}
	opConfirmPayment = &operation{name: "ConfirmPayment", method: http.MethodPost, route: "/v1/payments/{id}/confirm", class: classStateChange, doneCode: spec.CodePAY008,
		ident: identID, needs: needPayment, settle: opGetPayment}
	opCancelPayment = &operation{name: "CancelPayment", method: http.MethodPost, route: "/v1/payments/{id}/cancel", class: classStateChange, doneCode: spec.CodePAY007,
		ident: identID, needs: needPayment, settle: opGetPayment}
	opOpenDispute = &operation{name: "OpenDispute", method: http.MethodPost, route: "/v1/payments/{id}/dispute", class: classStateChange, doneCode: spec.CodeDIS002,
		ident: identID, needs: needPayment, settle: opGetPayment}
	// The dispute-cancel answer carries only id, ext_id and status.
	opCancelDispute = &operation{name: "CancelDispute", method: http.MethodPost, route: "/v1/payments/{id}/dispute/cancel", class: classStateChange, doneCode: spec.CodeDIS003,
		ident: identID, needs: needID | needExtID | needStatus, settle: opGetPayment}
	opGetPayout        = &operation{name: "GetPayout", method: http.MethodGet, route: "/v1/payouts/{id}", ident: identID}
	opGetPayoutByExtID = &operation{name: "GetPayoutByExtID", method: http.MethodGet, route: "/v1/payouts/by-ext-id/{extId}", ident: identExtID}
	opCreatePayout     = &operation{name: "CreatePayout", method: http.MethodPost, route: "/v1/payouts", class: classCreate, doneCode: spec.CodePAY003,
		ident: identExtID, needs: needPayment, settle: opGetPayoutByExtID}
	opListPayouts    = &operation{name: "ListPayouts", method: http.MethodGet, route: "/v1/payouts"}
	opListTerminals  = &operation{name: "ListTerminals", method: http.MethodGet, route: "/v1/terminals"}
	opGetBalance     = &operation{name: "GetBalance", method: http.MethodGet, route: "/v1/balance"}
	opListBanks      = &operation{name: "ListBanks", method: http.MethodGet, route: "/v1/banks"}
	opCreateTransfer = &operation{name: "CreateTransfer", method: http.MethodPost, route: "/v1/transfers", class: classMoneyMove, needs: needAmount,
		advice: "it was not re-sent, to avoid moving money twice: compare both terminals' balances (ListTerminals) with what you expect before trying again"}
	opCreateWithdrawal = &operation{name: "CreateWithdrawal", method: http.MethodPost, route: "/v1/withdrawals", class: classMoneyMove, needs: needWithdrawal,
		advice: "it was not re-sent, to avoid moving money twice: check the terminal's frozen balance (ListTerminals) and your wallet before trying again"}
	opGetWithdrawal    = &operation{name: "GetWithdrawal", method: http.MethodGet, route: "/v1/withdrawals/{id}", ident: identID}
	opGetWithdrawalFee = &operation{name: "GetWithdrawalFee", method: http.MethodGet, route: "/v1/withdrawals/fee"}
	opCheckCredentials = &operation{name: "CheckCredentials", method: http.MethodGet, route: "/v1/balance"}
)

// operations is the table as one list, in SPEC.md's order, so that code and
// tests can range over every endpoint: operations_test.go checks each row's
// method and route against openapi.yaml and the sandbox's routes, and names
// what is missing when an endpoint is added in one place only.
// CheckCredentials is a second row for GET /v1/balance (a read whose
// purpose is the credentials, not the balance).
var operations = []*operation{
	opCreatePayment, opGetPayment, opGetPaymentByExtID, opConfirmPayment, opCancelPayment,
	opOpenDispute, opCancelDispute,
	opCreatePayout, opListPayouts, opGetPayout, opGetPayoutByExtID,
	opListTerminals, opGetBalance, opListBanks, opCreateTransfer,
	opCreateWithdrawal, opGetWithdrawal, opGetWithdrawalFee,
	opCheckCredentials,
}

// doOperation is a Client.Do call's row: a GET is a read; anything else a
// money move, since the SDK cannot know what it does.
func doOperation(method, path string) *operation {
	op := &operation{name: "Do", method: method, route: doRoute(path)}
	if method != http.MethodGet {
		op.class = classMoneyMove
		op.advice = "it was not re-sent, in case it moved money: read the resource with a GET before trying again"
	}
	return op
}

// routeWords are the API's route segments; doRoute replaces any other
// (an id, an ext_id) by a placeholder, so a Do route is a safe metric label.
var routeWords = map[string]bool{"v1": true, "payments": true, "payouts": true, "by-ext-id": true, "confirm": true,
	"cancel": true, "dispute": true, "terminals": true, "balance": true, "banks": true, "transfers": true,
	"withdrawals": true, "fee": true}

func doRoute(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if s != "" && !routeWords[s] {
			segs[i] = "{param}"
		}
	}
	return strings.Join(segs, "/")
}

// adviceFor is the sentence an ErrUnknownOutcome error ends with.
func (op *operation) adviceFor(id, extID string) string {
	switch s := op.settle; {
	case s == nil:
		return op.advice
	case s.ident == identExtID:
		return fmt.Sprintf("read it back with %s(%q) before creating it again", s.name, truncate(extID, 80))
	default:
		return fmt.Sprintf("read it with %s(%q) to see whether it took effect before trying again", s.name, id)
	}
}

// maxRetryAfter is the longest Retry-After the SDK sleeps through: more is
// answered at once, so a checkout is not held for minutes.
const maxRetryAfter = 60 * time.Second

// retryable decides whether an attempt is worth repeating under op's
// class, and says why (for the debug log, as stripe-go's shouldRetry).
func retryable(op *operation, a *attempt) (bool, string) {
	switch {
	case a.err != nil && !retryableTransportError(a.err):
		return false, "a repeat cannot cure this transport error"
	case a.err != nil && op.class == classMoneyMove && !a.preSend:
		return false, "a money move is re-sent only after a failure known to come before sending"
	case a.err != nil:
		return true, "transport error"
	case a.tooLarge:
		return false, "the answer is over MaxResponseBytes"
	case a.status == http.StatusTooManyRequests:
		// PAY_005 is a business refusal; a bare 429 is a rate limiter.
		if op.class == classRead && a.code == "" {
			return true, "rate limited"
		}
		return false, "a refusal with an API code"
	case a.status == http.StatusNotImplemented:
		return false, "not implemented"
	case a.status >= 500 && a.code == spec.CodePAY004:
		return false, "no requisites (PAY_004) is a business answer"
	case a.status >= 500 && op.class == classMoneyMove:
		return false, "a money move that got a 5xx has reached the server"
	case a.status >= 500:
		return true, "server error"
	}
	return false, "a definite answer"
}

// retryableTransportError is false for failures no repeat cures.
func retryableTransportError(err error) bool {
	return !certificateError(err) && !errors.Is(err, errNoResponse)
}

// certificateError: a refused server certificate, in the handshake,
// before anything is sent.
func certificateError(err error) bool {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verify)
}

// preSendError reports whether err positively comes before a request is
// written: a failed dial, DNS lookup, TLS handshake or proxy connection.
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

// mayHaveApplied: a 2xx was applied; a 5xx other than PAY_004 or a
// transport error not provably before sending may have been; so may any
// answer to an attempt a layer below sent more than once (the answer is
// the last send's).
func (a *attempt) mayHaveApplied() bool {
	switch {
	case a.resent:
		return true
	case a.err != nil:
		return !a.preSend
	case a.status >= 200 && a.status < 300:
		return true
	case a.status >= 500:
		return a.code != spec.CodePAY004
	}
	return false
}

// backoffCeil is the longest wait after attempt n (from 1).
func backoffCeil(minWait, maxWait time.Duration, n int) time.Duration {
	if k := n - 1; k < 32 {
		if d := minWait << k; d > 0 && d < maxWait {
			return d
		}
	}
	return maxWait
}

// backoff is retryablehttp's Backoff hook: full jitter between min and
// min·2ⁿ (capped at max), never shorter than a Retry-After.
func backoff(minWait, maxWait time.Duration, n int, resp *http.Response) time.Duration {
	ceil := backoffCeil(minWait, maxWait, n+1)
	wait := minWait
	if ceil > minWait {
		wait += rand.N(ceil - minWait + 1)
	}
	if resp != nil {
		if ra, ok := retryAfter(resp.Header, time.Now()); ok {
			wait = max(wait, ra)
		}
	}
	return wait
}

// maxRetryAfterHeader caps what a Retry-After is read as, in either form:
// a date in year 9999 is a very long wait, not one that overflows.
const maxRetryAfterHeader = 24 * time.Hour

// retryAfter parses a Retry-After header: delay-seconds (too large for an
// integer is a very long wait, not none) or an HTTP date, at most
// maxRetryAfterHeader either way.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if secs < 0 {
			return 0, false
		}
		if err != nil || secs > int64(maxRetryAfterHeader/time.Second) {
			secs = int64(maxRetryAfterHeader / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), maxRetryAfterHeader), true
	}
	return 0, false
}
