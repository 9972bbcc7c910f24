package sandbox

import (
	"context"
	"errors"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Error codes of the /sandbox/ controls. They are the sandbox's own: the
// spec has no controls.
const (
	CodeControlNotFound = api.CodeControlNotFound // 404: unknown payment, payout or withdrawal id
	CodeControlConflict = api.CodeControlConflict // 409: the transition is not allowed from the current status
	CodeControlInvalid  = api.CodeControlInvalid  // 400: malformed body, unknown outcome, status or fault mode
	// CodeControlForbidden (403) refuses a control or inspection request
	// whose Host is not loopback while Config.AllowRemote is off.
	CodeControlForbidden = api.CodeControlForbidden
	// CodeControlMediaType (415) refuses a control POST without
	// Content-Type: application/json: a web page can send text/plain or a
	// form cross-origin without a preflight, but not JSON.
	CodeControlMediaType = api.CodeControlMediaType
	// CodeControlUnauthorized (401) refuses a control, inspection or
	// dashboard request without the control token of Config.ControlToken.
	CodeControlUnauthorized = api.CodeControlUnauthorized
)

// controlBackend is the Server as the /sandbox/ routes' api.Controls:
// each route calls the control the Go API calls, and gets its refusal as
// a *ledger.Error of the sentinel's kind, with the Go error's text (so the
// JSON answer says what the Go error says).
type controlBackend struct{ s *Server }

var _ api.Controls = controlBackend{}

// The conversion fails to compile when Fault and the body of
// POST /sandbox/faults part ways.
var _ = Fault(api.Fault{})

func (b controlBackend) VerifyPayment(id, outcome string) (any, error) {
	v, err := b.s.verifyPayment(id, outcome)
	return v, controlRefusal(err)
}

func (b controlBackend) ReviewDispute(id, outcome string) (any, error) {
	v, err := b.s.reviewDispute(id, outcome)
	return v, controlRefusal(err)
}

func (b controlBackend) SetPayoutStatus(id, status string) (any, error) {
	v, err := b.s.setPayoutStatus(id, status)
	return v, controlRefusal(err)
}

func (b controlBackend) SetWithdrawalStatus(id, status, txHash string) (any, error) {
	v, err := b.s.setWithdrawalStatus(id, status, txHash)
	return v, controlRefusal(err)
}

func (b controlBackend) Advance(d time.Duration) (time.Time, error) {
	if err := b.s.advance(d); err != nil {
		return time.Time{}, controlRefusal(err)
	}
	return b.s.Now(), nil
}

func (b controlBackend) InjectFault(f api.Fault) error {
	return controlRefusal(b.s.InjectFault(Fault(f)))
}

// FlushWebhooks returns ctx's error as it is: the route, which owns ctx,
// decides what a flush that did not finish answers.
func (b controlBackend) FlushWebhooks(ctx context.Context) error { return b.s.FlushWebhooks(ctx) }

func (b controlBackend) ResendWebhook(id string) (any, error) {
	d, err := b.s.ResendWebhook(id)
	if err != nil {
		return nil, controlRefusal(err)
	}
	return d, nil
}

func (b controlBackend) Reset() error       { return controlRefusal(b.s.reset()) }
func (b controlBackend) StoreFailed() error { return b.s.storeFailed() }
func (b controlBackend) State() any         { return b.s.State() }
func (b controlBackend) Requests() any      { return b.s.Requests() }
func (b controlBackend) Deliveries() any    { return b.s.Deliveries() }

// controlRefusal is a Go control's error as the routes take it: a
// *ledger.Error of its sentinel's kind (ErrNotFound NotFound,
// ErrWrongState WrongState, anything else Invalid) whose message is the
// error's text. A control's section that the store failed is its outcome,
// ledger.NotKept or ledger.MaybeKept, which the routes answer 503 or 500;
// another ErrStore (the store had failed before) is not kept.
func controlRefusal(err error) error {
	var out outcomeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &out):
		return out.out
	case errors.Is(err, ErrStore):
		return errNotKept
	}
	kind := ledger.Invalid
	switch {
	case errors.Is(err, ErrNotFound):
		kind = ledger.NotFound
	case errors.Is(err, ErrWrongState):
		kind = ledger.WrongState
	}
	return &ledger.Error{Kind: kind, Message: err.Error()}
}
