package service

import (
	"errors"
	"fmt"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// The texts of package sandbox's sentinels. A refusal of the service is a
// *ledger.Error whose Message starts with the text of its kind's sentinel,
// so that the JSON controls, the dashboard and the Go controls (which wrap
// the sentinel around the same text) say the same words.
const (
	NotFoundText   = "sandbox: not found"
	WrongStateText = api.WrongStateText
	InvalidText    = "sandbox: invalid argument"
)

// ErrStore is wrapped by the errors of a store that cannot be used (see
// sandbox.ErrStore, the same value).
var ErrStore = errors.New("sandbox: the database cannot be used")

// KindText is the sentinel text a refusal of kind starts with: NotFound
// is "not found", WrongState and Conflict a transition not allowed, any
// other kind an invalid argument.
func KindText(kind ledger.Kind) string {
	switch kind {
	case ledger.NotFound:
		return NotFoundText
	case ledger.WrongState, ledger.Conflict:
		return WrongStateText
	}
	return InvalidText
}

// refusal is a refusal of kind whose message is msg after its sentinel's text.
func refusal(kind ledger.Kind, msg string) *ledger.Error {
	return &ledger.Error{Kind: kind, Message: KindText(kind) + ": " + msg}
}

// notFound refuses an unknown id of kind ("payment", "payout").
func notFound(kind, id string) *ledger.Error {
	return refusal(ledger.NotFound, fmt.Sprintf("%s %q", kind, id))
}

// controlError is a rule's refusal as a control answers it: the same kind
// and code, its message after the sentinel's text.
func controlError(e *ledger.Error) *ledger.Error {
	if e == nil {
		return nil
	}
	return &ledger.Error{Kind: e.Kind, Code: e.Code, Field: e.Field, Message: KindText(e.Kind) + ": " + e.Message}
}

// Outcome is what became of a change the store failed to keep, or may
// have failed to (a *ledger.Error of kind NotKept or MaybeKept), as the Go
// controls and the pages show it: ErrStore (errors.Is), with the outcome's
// words.
type Outcome struct{ Out *ledger.Error }

func (e Outcome) Error() string { return ErrStore.Error() + ": " + e.Out.Message }
func (e Outcome) Unwrap() error { return ErrStore }

// stored is err with a store's outcome (NotKept, MaybeKept) as an Outcome;
// any other error as it is.
func stored(err error) error {
	var le *ledger.Error
	if errors.As(err, &le) && (le.Kind == ledger.NotKept || le.Kind == ledger.MaybeKept) {
		return Outcome{le}
	}
	return err
}
