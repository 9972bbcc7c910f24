package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/control"
	"github.com/paykit-dev/paykit-go/sandbox/internal/feed"
	"github.com/paykit-dev/paykit-go/sandbox/internal/guard"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Error codes of the /sandbox/ controls. They are the sandbox's own: the
// spec has no controls. Package sandbox re-exports them for Remote's users.
const (
	// CodeControlNotFound (404): unknown payment, payout, withdrawal or
	// delivery id, or no such control.
	CodeControlNotFound = "SANDBOX_NOT_FOUND"
	// CodeControlConflict (409): the transition is not allowed from the
	// current status.
	CodeControlConflict = "SANDBOX_CONFLICT"
	// CodeControlInvalid (400): malformed body, unknown outcome, status or
	// fault mode.
	CodeControlInvalid = "SANDBOX_INVALID"
	// CodeControlForbidden (403) refuses a control or inspection request
	// whose Host is not loopback while remote control is off (package
	// guard's refusal).
	CodeControlForbidden = guard.CodeForbidden
	// CodeControlMediaType (415) refuses a control POST without
	// Content-Type: application/json (package guard's refusal).
	CodeControlMediaType = guard.CodeMediaType
	// CodeControlUnauthorized (401, and 429 for a wrong token from a
	// throttled address) refuses a control, inspection or dashboard
	// request without the control token (package guard's refusal).
	CodeControlUnauthorized = guard.CodeUnauthorized
)

// WrongStateText is the text of sandbox.ErrWrongState, which begins the
// message of a flush that did not finish: the answer says what the Go
// error of a wrong state says. Package sandbox's tests hold the two
// together.
const WrongStateText = "sandbox: transition not allowed from the current status"

// controlBodyCap bounds a control's body: the largest, a fault, is a few
// hundred bytes.
const controlBodyCap = 1 << 20

// Controls is the sandbox as its /sandbox/ routes drive and inspect it: the
// same controls the Go API offers, in domain terms. A refusal is a
// *ledger.Error whose Kind the routes answer with a status: NotFound 404,
// WrongState and Conflict 409, the rest 400; its Message is the body's
// message as it is. Any other error is a 400 with its text. A change the
// store could not keep shows in StoreFailed, which the routes ask before
// and after every control (503 SANDBOX_STORE), whatever the control said.
//
// The values the controls and the views return are only encoded as JSON:
// they are the sandbox's public read models, which this package does not
// repeat.
type Controls interface {
	control.Verbs
	// FlushWebhooks waits until every queued webhook is delivered or
	// given up on, and returns ctx's error when ctx ends first (which the
	// route answers as a WrongState refusal).
	FlushWebhooks(ctx context.Context) error
	// StoreFailed is the store's failure, once it failed; nil before.
	StoreFailed() error
	// State is the sandbox's state for GET /sandbox/state.
	State() any
	// Requests are the latest requests for GET /sandbox/requests.
	Requests() any
	// Deliveries is the webhook delivery log for GET /sandbox/webhooks.
	Deliveries() any
}

// ControlConfig is what the controls' guard takes from the sandbox's
// configuration.
type ControlConfig struct {
	// AllowRemote lifts the loopback Host check (and then requires
	// ControlToken).
	AllowRemote bool
	// ControlToken, when set, is required on every control, inspection
	// and dashboard request.
	ControlToken string
	// Logger receives a line per wrong control token (the client address,
	// never the token); nil logs nothing.
	Logger *slog.Logger
	// Now is the wall clock that blocks an address for its wrong tokens;
	// nil is time.Now. It is never the sandbox clock: an Advance must not
	// lift a block.
	Now func() time.Time
	// Requests is the request log as a feed, which GET
	// /sandbox/requests?follow=1 serves (each value is encoded as JSON);
	// nil answers ?follow=1 with 404.
	Requests *feed.Log[any]
}

// ControlServer serves the /sandbox/ controls and the inspection views
// behind its guard (package guard), which the dashboard's routes and the
// login page share.
type ControlServer struct {
	g        *guard.Guard
	b        Controls
	requests *feed.Log[any] // ControlConfig.Requests
}

// NewControlServer builds the controls' routes over b, and their guard
// from cfg: its refusals are the API's error bodies, and the sandbox's own
// webhook deliveries are refused.
func NewControlServer(cfg ControlConfig, b Controls) *ControlServer {
	g := guard.New(guard.Config{AllowRemote: cfg.AllowRemote, ControlToken: cfg.ControlToken,
		Logger: cfg.Logger, Now: cfg.Now, DeliveryAgent: webhook.UserAgent,
		Refuse: func(w http.ResponseWriter, status int, code, msg string) {
			WriteError(w, NewError(status, code, msg))
		}})
	return &ControlServer{g: g, b: b, requests: cfg.Requests}
}

// Guard is the guard of the controls, which the dashboard's routes and
// the login page (its LoginRoutes) share, so that a wrong token counts the
// same wherever it is tried.
func (c *ControlServer) Guard() *guard.Guard { return c.g }

// ControlRoutes registers the unsigned JSON controls. They exist for
// non-Go users of the binary; Go code calls the sandbox's methods.
func (c *ControlServer) ControlRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /sandbox/payments/{id}/verify", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Outcome string `json:"outcome"`
		}
		c.control(w, r, &req, func() (any, error) { return c.b.VerifyPayment(r.PathValue("id"), req.Outcome) })
	})
	mux.HandleFunc("POST /sandbox/payments/{id}/dispute/review", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Outcome string `json:"outcome"`
		}
		c.control(w, r, &req, func() (any, error) { return c.b.ReviewDispute(r.PathValue("id"), req.Outcome) })
	})
	mux.HandleFunc("POST /sandbox/payouts/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Status string `json:"status"`
		}
		c.control(w, r, &req, func() (any, error) { return c.b.SetPayoutStatus(r.PathValue("id"), req.Status) })
	})
	mux.HandleFunc("POST /sandbox/withdrawals/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Status string `json:"status"`
			TxHash string `json:"tx_hash"`
		}
		c.control(w, r, &req, func() (any, error) {
			return c.b.SetWithdrawalStatus(r.PathValue("id"), req.Status, req.TxHash)
		})
	})
	mux.HandleFunc("POST /sandbox/clock/advance", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Seconds int64 `json:"seconds"`
		}
		c.control(w, r, &req, func() (any, error) {
			if req.Seconds < 0 {
				return nil, errors.New("seconds must not be negative")
			}
			// Multiplying a huge count would wrap around to a negative or
			// small duration; the sandbox bounds the total anyway.
			d := time.Duration(math.MaxInt64)
			if req.Seconds < int64(math.MaxInt64/time.Second) {
				d = time.Duration(req.Seconds) * time.Second
			}
			now, err := c.b.Advance(d)
			if err != nil {
				return nil, err
			}
			return map[string]string{"now": Timestamp(now)}, nil
		})
	})
	mux.HandleFunc("POST /sandbox/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		c.control(w, r, &f, func() (any, error) { return struct{}{}, c.b.InjectFault(f) })
	})
	mux.HandleFunc("POST /sandbox/webhooks/flush", func(w http.ResponseWriter, r *http.Request) {
		var req struct{}
		c.control(w, r, &req, func() (any, error) {
			// Within the request and a minute at most: a receiver that
			// never answers must not hold the control for good.
			ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
			defer cancel()
			if err := c.b.FlushWebhooks(ctx); err != nil {
				// The context ended with deliveries still pending: the
				// sandbox is not yet where the caller wants it, a wrong
				// state (409, which Remote matches to ErrWrongState).
				return nil, &ledger.Error{Kind: ledger.WrongState, Message: WrongStateText + ": webhooks still pending: " + err.Error()}
			}
			return struct{}{}, nil
		})
	})
	mux.HandleFunc("POST /sandbox/webhooks/{id}/resend", func(w http.ResponseWriter, r *http.Request) {
		var req struct{}
		c.control(w, r, &req, func() (any, error) { return c.b.ResendWebhook(r.PathValue("id")) })
	})
	mux.HandleFunc("POST /sandbox/reset", func(w http.ResponseWriter, r *http.Request) {
		var req struct{}
		c.control(w, r, &req, func() (any, error) { return struct{}{}, c.b.Reset() })
	})
	mux.HandleFunc("/sandbox/", func(w http.ResponseWriter, r *http.Request) {
		if !c.g.Admit(w, r, false) {
			return
		}
		WriteError(w, NewError(http.StatusNotFound, CodeControlNotFound, "no such control: "+r.Method+" "+r.URL.Path))
	})
}

// control guards the request (the guard's Admit), decodes the body into
// req, runs do and answers its result, or its refusal (controlRefusal). A
// store that failed before or during the control is 503 SANDBOX_STORE:
// what the control did was not kept.
func (c *ControlServer) control(w http.ResponseWriter, r *http.Request, req any, do func() (any, error)) {
	if !c.g.Admit(w, r, true) {
		return
	}
	buf, err := io.ReadAll(http.MaxBytesReader(w, r.Body, controlBodyCap))
	if err != nil {
		WriteError(w, NewError(http.StatusBadRequest, CodeControlInvalid, "body too large or unreadable"))
		return
	}
	if err := decodeJSON(buf, req, true); err != nil {
		WriteError(w, NewError(http.StatusBadRequest, CodeControlInvalid, "body is not valid JSON: "+err.Error()))
		return
	}
	if c.b.StoreFailed() != nil {
		WriteError(w, StoreUnavailable())
		return
	}
	v, err := do()
	var out *ledger.Error
	switch {
	case errors.As(err, &out) && (out.Kind == ledger.NotKept || out.Kind == ledger.MaybeKept):
		WriteError(w, FromLedger(out)) // the control's own outcome, not the store's state now
	case err == nil:
		WriteJSON(w, http.StatusOK, v)
	default:
		WriteError(w, controlRefusal(err))
	}
}

// controlRefusal is a control's error as its answer: a rule's refusal by
// its kind, anything else a 400; the message is the error's text.
func controlRefusal(err error) *Error {
	switch ControlStatus(err) {
	case http.StatusNotFound:
		return NewError(http.StatusNotFound, CodeControlNotFound, err.Error())
	case http.StatusConflict:
		return NewError(http.StatusConflict, CodeControlConflict, err.Error())
	}
	return NewError(http.StatusBadRequest, CodeControlInvalid, err.Error())
}

// ControlStatus is the status a control's refusal is answered with, by
// its kind (NotFound 404, WrongState and Conflict 409, anything else 400):
// the one table of the JSON controls and of the dashboard's forms.
func ControlStatus(err error) int {
	var le *ledger.Error
	if errors.As(err, &le) {
		switch le.Kind {
		case ledger.NotFound:
			return http.StatusNotFound
		case ledger.WrongState, ledger.Conflict:
			return http.StatusConflict
		}
	}
	return http.StatusBadRequest
}
