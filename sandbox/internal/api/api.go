// Package api is the sandbox's HTTP face: routes, authentication, body
// caps, the wire views of the resources, and the mapping of a rule's
// refusal (a *ledger.Error) to an HTTP status and the spec's error body;
// faults, inspection and health. It asks the sandbox through two
// interfaces, so that it knows the domain only through package ledger's
// types and nothing of how resources are stored: Backend, the merchant
// API (/v1/) and the health endpoints, one section of the sandbox per
// call; and Controls, the /sandbox/ controls and inspection views, which
// ControlServer serves behind package guard's Guard (the loopback Host,
// the control token, JSON for a control POST), which it shares with the
// dashboard's routes and login page.
package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Error is an error answer of the API: an HTTP status and the spec's body
// ({"error", "message", "data"}).
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is the body's "error": the spec's code, or one of the sandbox's
	// own (AUTH_001, SANDBOX_STORE, NOT_FOUND).
	Code string
	// Message is the body's "message", for a person.
	Message string
	// Data is the body's "data"; nil is written as {}.
	Data map[string]any
}

// Error returns the code and message (for logs and tests).
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// NewError is an answer without data.
func NewError(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// Invalid is a 400 naming the field at fault in data.field, as the spec's
// invalid-parameters answers do.
func Invalid(code, field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: msg, Data: map[string]any{"field": field}}
}

// FromLedger is a rule's refusal as the API answers it: not found 404, a
// conflict 409, nothing to serve with 503 (PAY_004), a limit reached 429
// (PAY_005), and everything else 400 (the spec answers a wrong state and
// missing money with 400), naming the field when the rule did.
func FromLedger(e *ledger.Error) *Error {
	switch {
	case e.Kind == ledger.NotFound:
		return NewError(http.StatusNotFound, e.Code, e.Message)
	case e.Kind == ledger.Conflict:
		return NewError(http.StatusConflict, e.Code, e.Message)
	case e.Kind == ledger.Unavailable:
		return NewError(http.StatusServiceUnavailable, e.Code, e.Message)
	case e.Kind == ledger.TooMany:
		return NewError(http.StatusTooManyRequests, e.Code, e.Message)
	case e.Kind == ledger.NotKept:
		return StoreUnavailable()
	case e.Kind == ledger.MaybeKept:
		return StoreUncertain()
	case e.Field != "":
		return Invalid(e.Code, e.Field, e.Message)
	default:
		return NewError(http.StatusBadRequest, e.Code, e.Message)
	}
}

// StoreUnavailable is the answer of a request whose change the store did
// not keep (its commit failed, or the store had failed before), and of
// every request once the store failed: 503 means not kept, so the request
// may be sent again once the sandbox is restarted.
func StoreUnavailable() *Error {
	return NewError(http.StatusServiceUnavailable, spec.CodeSandboxStore,
		"the sandbox's database cannot be used; see its log, fix the cause and restart it")
}

// StoreUncertain is the answer of a request whose change was committed
// when the store failed before making it durable (a failed sync of the
// -wal file): it may or may not be in the file after a restart, which a
// 503 would deny. 500, as any server error after which a change may have
// been made; the SDK calls it an unknown outcome and names the read that
// settles it.
func StoreUncertain() *Error {
	return NewError(http.StatusInternalServerError, spec.CodeSandboxStore,
		"the sandbox's database failed while making this change durable: it may or may not be kept; "+
			"restart the sandbox and read it back before asking it again")
}

type errorBody struct {
	Error   string         `json:"error"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// WriteJSON writes v as the JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"` + spec.CodeSYS001 + `","message":"sandbox could not encode the response","data":{}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// CodeRecorder is a ResponseWriter that keeps the error code answered, for
// the request log: WriteError is the one place that knows the code, which
// the log would otherwise have to parse back out of the body.
type CodeRecorder interface {
	// RecordCode is told the code of the error body being written.
	RecordCode(code string)
}

// WriteError writes e as the spec's error body.
func WriteError(w http.ResponseWriter, e *Error) {
	data := e.Data
	if data == nil {
		data = map[string]any{}
	}
	if cr, ok := w.(CodeRecorder); ok {
		cr.RecordCode(e.Code)
	}
	WriteJSON(w, e.Status, errorBody{Error: e.Code, Message: e.Message, Data: data})
}

// decodeJSON decodes a request body into v: one JSON value and nothing
// after it; an empty body decodes as {}. strict, which the controls ask
// for, refuses unknown fields: a webhook payload
// ({"id":…,"status":"completed",…}) posted at a control is not a command,
// and neither is a typo.
func decodeJSON(body []byte, v any, strict bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Amount is a money amount in a request: a JSON number, null or absent
// meaning "not given". A numeric string is refused: the spec types every
// amount as a number, and a client that sends strings would pass here and
// fail against the service.
type Amount struct {
	// D is the amount, when Set.
	D decimal.Decimal
	// Set: the request gave one.
	Set bool
}

// UnmarshalJSON reads a JSON number, bounded before any big-number work.
func (a *Amount) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*a = Amount{}
		return nil
	}
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return errors.New("amount must be a JSON number")
	}
	// No real amount has 40 digits, and "1e999999999" must not make the
	// sandbox print a gigabyte of zeros.
	if len(s) > 40 {
		return errors.New("amount out of range")
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return err
	}
	if e := d.Exponent(); e < -18 || e > 18 {
		return errors.New("amount out of range")
	}
	*a = Amount{D: d, Set: true}
	return nil
}

// RUB writes a decimal as a bare JSON number with the scale it carries,
// so a RUB amount goes back exactly as the client wrote it: 1500.50 stays
// 1500.50, 1500 stays 1500.
type RUB decimal.Decimal

// MarshalJSON writes the number.
func (n RUB) MarshalJSON() ([]byte, error) { return []byte(ledger.Scaled(decimal.Decimal(n), 0)), nil }

// USDT writes a USDT figure as a bare JSON number with at least two
// decimal places (1000.00), more if the value has them.
type USDT decimal.Decimal

// MarshalJSON writes the number.
func (n USDT) MarshalJSON() ([]byte, error) { return []byte(ledger.Scaled(decimal.Decimal(n), 2)), nil }

// Timestamp formats a time the way every timestamp of the API is written.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// MaxLengthMessageFormat is the message of a value over its cap (the field
// name, the cap).
const MaxLengthMessageFormat = "%s must be at most %d characters"

// capped is a free-text field of a request: its name, its value and its
// cap.
type capped struct {
	name, value string
	limit       int
}

// tooLong returns the refusal of the first field over its cap, or nil.
func tooLong(code string, fields ...capped) *Error {
	for _, f := range fields {
		if utf8.RuneCountInString(f.value) > f.limit {
			return Invalid(code, f.name, fmt.Sprintf(MaxLengthMessageFormat, f.name, f.limit))
		}
	}
	return nil
}
