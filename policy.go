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
)

// This file is the policy of every call as data: the operation table (what
// may be retried, what "already done" looks like, what an answer must
// carry, which read settles an unknown outcome), and the pure functions the
// call path asks (is this attempt worth repeating, how long to wait). The
// call path in call.go applies it; no resource method decides any of it.

// retryClass says when an operation may be sent again. The service has no
// idempotency keys, so what is safe to repeat depends on what the operation
// does; see the README's "Retries and idempotency" table.
type retryClass uint8

const (
	// classRead: GETs. Repeating them changes nothing.
	classRead retryClass = iota
	// classCreate: creates keyed by the merchant's ext_id. A repeat cannot
	// create a second resource; it answers PAY_003, which the call path
	// settles by reading the resource back by ext_id.
	classCreate
	// classStateChange: payment transitions. A repeat of a transition that
	// already happened answers a "wrong state" error, which the call path
	// settles by reading the payment back.
	classStateChange
	// classMoneyMove: transfers, withdrawals and Client.Do's writes.
	// Nothing makes a repeat safe, so they are re-sent only when the failed
	// attempt provably sent nothing.
	classMoneyMove
)

// identity is what an answer must carry to be about the resource the call
// named; the call path compares it, so no method can forget to.
type identity uint8

const (
	// identNone (the zero value): lists, balances, fees, transfers; what
	// is compared (if anything) is the call's own want.
	_ identity = iota
	// identID: the id in the path.
	identID
	// identExtID: the ext_id in the path (reads by ext_id) or in the body
	// (creates).
	identExtID
)

// needs says which facts a write's answer must carry to be the resource at
// all: a 2xx body such as {} or {"error":"PAY_004"} decodes without error
// into an empty resource, and must not pass for one. A read needs only its
// identity (the id or ext_id it names), so that a lean answer to a GET
// stays readable.
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
	name   string
	method string
	// route is the path template, for telemetry and for building a
	// settling read: never a concrete id.
	route string
	class retryClass
	// doneCode is the error a retried attempt answers when an earlier,
	// unanswered attempt already did the work.
	doneCode string
	// ident is what the answer must be about; needs what it must carry.
	ident identity
	needs needs
	// settle is the read that settles an unknown outcome and reads back a
	// lost or unusable answer; nil for reads and money moves.
	settle *operation
	// advice is what a money move's unknown outcome tells the merchant to
	// check, there being no read of the resource.
	advice string
}

// The operation table: every endpoint of the API and its whole policy.
var (
	opGetPayment        = &operation{name: "GetPayment", method: http.MethodGet, route: "/v1/payments/{id}", ident: identID}
	opGetPaymentByExtID = &operation{name: "GetPaymentByExtID", method: http.MethodGet, route: "/v1/payments/by-ext-id/{extId}", ident: identExtID}
	opCreatePayment     = &operation{name: "CreatePayment", method: http.MethodPost, route: "/v1/payments", class: classCreate, doneCode: "PAY_003",
		ident: identExtID, needs: needPayment, settle: opGetPaymentByExtID}
	opConfirmPayment = &operation{name: "ConfirmPayment", method: http.MethodPost, route: "/v1/payments/{id}/confirm", class: classStateChange, doneCode: "PAY_008",
		ident: identID, needs: needPayment, settle: opGetPayment}
	opCancelPayment = &operation{name: "CancelPayment", method: http.MethodPost, route: "/v1/payments/{id}/cancel", class: classStateChange, doneCode: "PAY_007",
		ident: identID, needs: needPayment, settle: opGetPayment}
	opOpenDispute = &operation{name: "OpenDispute", method: http.MethodPost, route: "/v1/payments/{id}/dispute", class: classStateChange, doneCode: "DIS_002",
		ident: identID, needs: needPayment, settle: opGetPayment}
	// The dispute-cancel answer carries only id, ext_id and status.
	opCancelDispute = &operation{name: "CancelDispute", method: http.MethodPost, route: "/v1/payments/{id}/dispute/cancel", class: classStateChange, doneCode: "DIS_003",
		ident: identID, needs: needID | needExtID | needStatus, settle: opGetPayment}
	opGetPayout        = &operation{name: "GetPayout", method: http.MethodGet, route: "/v1/payouts/{id}", ident: identID}
	opGetPayoutByExtID = &operation{name: "GetPayoutByExtID", method: http.MethodGet, route: "/v1/payouts/by-ext-id/{extId}", ident: identExtID}
	opCreatePayout     = &operation{name: "CreatePayout", method: http.MethodPost, route: "/v1/payouts", class: classCreate, doneCode: "PAY_003",
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
	// opCheckCredentials is CheckCredentials's signed read (GET /v1/balance).
	opCheckCredentials = &operation{name: "CheckCredentials", method: http.MethodGet, route: "/v1/balance"}
)

// doOperation is the row of a Client.Do call: a GET is a read; any other
// method is a money move, since the SDK cannot know what it does.
func doOperation(method, path string) *operation {
	op := &operation{name: "Do", method: method, route: doRoute(path)}
	if method != http.MethodGet {
		op.class = classMoneyMove
		op.advice = "it was not re-sent, in case it moved money: read the resource with a GET before trying again"
	}
	return op
}

// routeWords are the path segments of the API's routes; doRoute keeps
// these and replaces every other segment (an id, an ext_id) by a
// placeholder, so a Do call's route is as safe a metric label as a typed
// method's.
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

// advice names the read that settles an unknown outcome of a call of op on
// the resource id / extID: the sentence an ErrUnknownOutcome error ends with.
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

// maxRetryAfter is the longest Retry-After the SDK sleeps through. A server
// asking for more is treated as a refusal, answered at once, so a checkout
// is not held for minutes inside a library call.
const maxRetryAfter = 60 * time.Second

// retryable decides whether an attempt that ended so is worth repeating
// under op's class, and says why: the reason goes to the debug log, as
// stripe-go logs its shouldRetry reasons. Business errors are never
// retried: they would only be refused again.
func retryable(op *operation, a *attempt) (bool, string) {
	switch {
	case a.err != nil && !retryableTransportError(a.err):
		return false, "a repeat cannot cure this transport error"
	case a.err != nil && op.class == classMoneyMove && !a.preSend:
		// A connection that failed later, or a transport that does not
		// say, may have delivered it.
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
	case a.status >= 500 && a.code == "PAY_004":
		return false, "no requisites (PAY_004) is a business answer"
	case a.status >= 500 && op.class == classMoneyMove:
		return false, "a money move that got a 5xx has reached the server"
	case a.status >= 500:
		return true, "server error"
	}
	return false, "a definite answer"
}

// retryableTransportError is false for failures that a repeat cannot cure:
// a certificate the client does not trust, a body over the cap, a
// transport that answered nothing at all.
func retryableTransportError(err error) bool {
	return !certificateError(err) && !errors.Is(err, errNoResponse)
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

// mayHaveApplied reports whether an attempt of a call that changes
// something may have been applied: a 2xx was; a 5xx other than PAY_004 may
// have been; a refusal (4xx) was not; a transport error may have been
// unless it provably came before anything was sent.
func (a *attempt) mayHaveApplied() bool {
	switch {
	case a.err != nil:
		return !a.preSend
	case a.status >= 200 && a.status < 300:
		return true
	case a.status >= 500:
		return a.code != "PAY_004"
	}
	return false
}

// backoffCeil is the longest wait before the retry that follows attempt n
// (counting from 1): exponential from minWait, capped at maxWait.
func backoffCeil(minWait, maxWait time.Duration, n int) time.Duration {
	if k := n - 1; k < 32 {
		if d := minWait << k; d > 0 && d < maxWait {
			return d
		}
	}
	return maxWait
}

// backoff is retryablehttp's Backoff hook: exponential with full jitter
// between min and min·2ⁿ (capped at max), and never shorter than a
// Retry-After the server sent with any status. n counts retries from 0.
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

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
// A number of seconds too large for any integer is a very long wait, not
// no wait at all.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := h.Get("Retry-After")
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
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
