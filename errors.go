package paykit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Sentinel errors, for errors.Is. Each *Error matches exactly the sentinels of
// its code and HTTP status, so a merchant can branch on meaning without
// parsing codes:
//
//	if errors.Is(err, paykit.ErrInsufficientFunds) { … }
var (
	// ErrInvalidParameters: PAY_002, WDR_001, TRF_001, and every
	// *ValidationError the SDK returns before sending anything.
	ErrInvalidParameters = errors.New("paykit: invalid parameters")
	// ErrDuplicateExtID: PAY_003, a payment or payout with this ext_id exists.
	// (*Error).ExtID tells which.
	ErrDuplicateExtID = errors.New("paykit: ext_id already exists")
	// ErrNoRequisites: PAY_004, no requisites are available for the payment.
	ErrNoRequisites = errors.New("paykit: no requisites available")
	// ErrTooManySameAmount: PAY_005, too many payments with the same amount;
	// vary the amount or retry later.
	ErrTooManySameAmount = errors.New("paykit: too many payments with the same amount")
	// ErrPaymentNotFound: PAY_006.
	ErrPaymentNotFound = errors.New("paykit: payment not found")
	// ErrPaymentNotCancellable: PAY_007, the payment is no longer PENDING.
	ErrPaymentNotCancellable = errors.New("paykit: payment cannot be cancelled")
	// ErrPaymentNotConfirmable: PAY_008, the payment is no longer PENDING.
	ErrPaymentNotConfirmable = errors.New("paykit: payment cannot be confirmed")
	// ErrDisputeNotAllowed: DIS_001, disputes open only on CANCELLED or
	// CANCELLED_APPEAL payments.
	ErrDisputeNotAllowed = errors.New("paykit: dispute not allowed in this payment status")
	// ErrDisputeExists: DIS_002, a dispute is already open.
	ErrDisputeExists = errors.New("paykit: dispute already exists")
	// ErrDisputeNotActive: DIS_003, only a dispute in status DISPUTE can be
	// cancelled.
	ErrDisputeNotActive = errors.New("paykit: no active dispute")
	// ErrPayoutNotFound: PAY_001 answered with HTTP 404.
	ErrPayoutNotFound = errors.New("paykit: payout not found")
	// ErrInternal: PAY_001 answered with HTTP 500, SYS_001, and any other 5xx
	// without a more specific meaning (a proxy's HTML 502 included).
	ErrInternal = errors.New("paykit: internal server error")
	// ErrWithdrawalNotFound: WDR_003.
	ErrWithdrawalNotFound = errors.New("paykit: withdrawal not found")
	// ErrInsufficientFunds: WDR_002 and TRF_003.
	ErrInsufficientFunds = errors.New("paykit: insufficient funds")
	// ErrTerminalNotFound: TRF_002.
	ErrTerminalNotFound = errors.New("paykit: terminal not found")
	// ErrUnauthorized: HTTP 401 or 403, whatever the body says: the API key
	// or the signature was refused.
	ErrUnauthorized = errors.New("paykit: unauthorized")
	// ErrUnknownOutcome: the request may or may not have taken effect. A call
	// that changes something returns it, beside its cause, whenever it
	// failed after an attempt may have reached the server. Its text names
	// the read that settles it: GetPaymentByExtID or GetPayoutByExtID
	// before creating again, GetPayment after a state change, the
	// terminals' balances (ListTerminals) after a money move. An "already
	// done" answer to a retry (PAY_003, PAY_007, …) that no read-back
	// settled stays in its text but does not match its sentinel: it says
	// nothing about whether this call's request was applied.
	ErrUnknownOutcome = errors.New("paykit: outcome unknown")
)

// Error is an error answered by the API: a JSON error body, or any non-2xx
// response at all. Match it with errors.Is against the sentinels, or read it
// with errors.As:
//
//	var apiErr *paykit.Error
//	if errors.As(err, &apiErr) && apiErr.Code == "PAY_003" { … apiErr.ExtID() … }
type Error struct {
	// Code is the API error code, such as "PAY_003". It is empty when the
	// body was not the API's error shape (an HTML page from a proxy).
	Code string
	// HTTPStatus is the status code of the response.
	HTTPStatus int
	// Message is the server's text; for a body that is not the error shape,
	// a short, sanitised excerpt of the body.
	Message string
	// Data is the raw "data" object of the error body, nil when absent.
	// One over MaxErrorDataBytes keeps only its ext_id.
	Data       json.RawMessage
	retryAfter time.Duration // the waiters honour it
}

// Error formats the code, status and message, card and phone numbers
// masked.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("paykit: ")
	if e.Code != "" {
		b.WriteString(sanitizeCode(e.Code)) // an *Error built by hand is not sanitized yet
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "(HTTP %d)", e.HTTPStatus)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(mask.Text(e.Message))
	}
	return b.String()
}

// Is reports whether target is the sentinel that e's code and status mean.
func (e *Error) Is(target error) bool {
	s := e.sentinel()
	return s != nil && s == target
}

// sentinel resolves the meaning of e, nil when it has none. PAY_001 means
// "internal error" on payment calls and "payout not found" on payout
// reads; the two are told apart by HTTP status alone, never by message text.
func (e *Error) sentinel() error {
	switch s := codeSentinels[e.Code]; {
	case e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden:
		return ErrUnauthorized
	case e.Code == spec.CodePAY001 && e.HTTPStatus == http.StatusNotFound:
		return ErrPayoutNotFound
	case s != nil:
		return s
	case e.HTTPStatus >= 500:
		return ErrInternal
	}
	return nil
}

// codeSentinels maps each API error code to the sentinel it means.
var codeSentinels = map[string]error{
	spec.CodePAY002: ErrInvalidParameters, spec.CodeWDR001: ErrInvalidParameters, spec.CodeTRF001: ErrInvalidParameters,
	spec.CodePAY003: ErrDuplicateExtID, spec.CodePAY004: ErrNoRequisites, spec.CodePAY005: ErrTooManySameAmount,
	spec.CodePAY006: ErrPaymentNotFound, spec.CodePAY007: ErrPaymentNotCancellable, spec.CodePAY008: ErrPaymentNotConfirmable,
	spec.CodeDIS001: ErrDisputeNotAllowed, spec.CodeDIS002: ErrDisputeExists, spec.CodeDIS003: ErrDisputeNotActive,
	spec.CodeWDR002: ErrInsufficientFunds, spec.CodeTRF003: ErrInsufficientFunds,
	spec.CodeWDR003: ErrWithdrawalNotFound, spec.CodeTRF002: ErrTerminalNotFound,
}

// ExtID returns data.ext_id of the error body: for PAY_003, the ext_id that
// already exists. It is "" when the body carries none.
func (e *Error) ExtID() string {
	var d struct {
		ExtID flexString `json:"ext_id"`
	}
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return string(d.ExtID)
}

// maxExcerpt bounds the text kept from a body that is not the error shape.
const maxExcerpt = 200

// maxMessage bounds the server's message kept in an *Error.
const maxMessage = 1024

// MaxErrorDataBytes bounds Error.Data: an error kept in a log queue or a
// retry record must not pin a server's whole body.
const MaxErrorDataBytes = 64 << 10

// boundData copies an error body's data object; over MaxErrorDataBytes it
// keeps only its ext_id, what ExtID reads.
func boundData(d []byte, sec secrets) json.RawMessage {
	if len(d) <= MaxErrorDataBytes {
		return append(json.RawMessage(nil), d...)
	}
	var small struct {
		ExtID *flexString `json:"ext_id,omitempty"`
	}
	if json.Unmarshal(d, &small) != nil || small.ExtID == nil {
		return nil
	}
	out, _ := json.Marshal(map[string]string{"ext_id": truncate(sec.scrub(string(*small.ExtID)), 1024)})
	return out
}

// decodeError turns a non-2xx response into an *Error. It never fails: a
// proxy's HTML 502 gives its status and a short excerpt. The call's
// secrets, should the answer echo them, are replaced before anything is
// cut to length, so that no part of one survives at a cut: as written,
// and inside each JSON string once unescaped (Data and an excerpt keep
// the body's escapes, which would hide a secret from a scrub of the
// bytes).
func decodeError(status int, body []byte, sec secrets) *Error {
	e := &Error{HTTPStatus: status}
	body = sec.scrubJSON(sec.scrubBytes(body))
	var wire struct {
		Error   flexString      `json:"error"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &wire) == nil && wire.Error != "" {
		e.Code = sanitizeCode(sec.scrub(string(wire.Error)))
		var msg string
		if json.Unmarshal(wire.Message, &msg) != nil {
			msg = string(wire.Message)
		}
		// Again once decoded: a JSON escape hides a secret from the
		// body's scrub.
		e.Message = truncate(sec.scrub(msg), maxMessage)
		if d := bytes.TrimSpace(wire.Data); len(d) > 0 && string(d) != "null" {
			e.Data = boundData(d, sec)
		}
		return e
	}
	e.Message = excerpt(body)
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// invalidCode stands in for an error code not shaped like the API's: a
// card number or a key in the "error" field must not reach Error.Code, a
// log, a span or a metric label (nor make its cardinality unbounded).
const invalidCode = "INVALID_CODE"

// sanitizeCode keeps a code shaped like "PAY_004" (a letter, then letters,
// digits and underscores, at most 32, fewer than seven digits so that no
// card or phone number passes) and replaces anything else.
func sanitizeCode(s string) string {
	if len(s) == 0 || len(s) > 32 || !isAlnum(s[0]) || isDigit(s[0]) {
		return invalidCode
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			digits++
		case !isAlnum(c) && c != '_':
			return invalidCode
		}
	}
	if digits > 6 {
		return invalidCode
	}
	return s
}

// excerpt makes a short, printable, single-line excerpt of an arbitrary body.
func excerpt(body []byte) string {
	if len(body) > 4*maxExcerpt {
		body = body[:4*maxExcerpt]
	}
	var b strings.Builder
	space := false
	for len(body) > 0 && b.Len() < maxExcerpt {
		r, n := utf8.DecodeRune(body)
		body = body[n:]
		if r == utf8.RuneError && n <= 1 || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	s := b.String()
	if len(s) > maxExcerpt {
		return truncate(s, maxExcerpt)
	}
	if len(body) > 0 {
		s += "…"
	}
	return s
}

// ValidationError reports input that the SDK refused before sending anything.
// It matches ErrInvalidParameters with errors.Is.
type ValidationError struct {
	// Field is the parameter's name as the API spells it ("amount", "ext_id",
	// "id", "attachment", …).
	Field string
	// Reason says what is wrong, without echoing the value.
	Reason string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return "paykit: invalid " + e.Field + ": " + e.Reason
}

// Is makes every ValidationError match ErrInvalidParameters.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidParameters }

func invalid(field, reason string) error { return &ValidationError{Field: field, Reason: reason} }

// unknownOutcomeError wraps the failure of a call that changes something
// after an attempt may have been applied; check names the settling read.
type unknownOutcomeError struct {
	op, check string
	cause     error
}

func (e *unknownOutcomeError) Error() string {
	return fmt.Sprintf("paykit: %s: outcome unknown, the request may have been applied (%v); %s",
		e.op, e.cause, e.check)
}

// Unwrap exposes both ErrUnknownOutcome and the cause.
func (e *unknownOutcomeError) Unwrap() []error { return []error{ErrUnknownOutcome, e.cause} }
