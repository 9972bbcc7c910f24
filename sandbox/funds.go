package sandbox

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Terminals are the merchant's terminals, copied.
func (b apiBackend) Terminals(key string) []terminal {
	s := b.s
	s.begin()
	defer s.commit()
	m := s.merchants[key]
	if m == nil {
		return nil
	}
	out := make([]terminal, 0, len(m.Terminals))
	for _, t := range m.Terminals {
		out = append(out, *t)
	}
	return out
}

// Transfer moves USDT between two terminals of the merchant in one
// section (the ledger's rule), so no reader ever sees the debit without
// the credit.
func (b apiBackend) Transfer(key, fromID, toID string, amount decimal.Decimal) (lerr *ledger.Error) {
	s := b.s
	s.begin()
	defer s.endInto(&lerr)
	return ledger.TransferFunds(s.st.core, s.merchants[key], fromID, toID, amount)
}

// Withdrawal statuses.
const (
	WithdrawalPending    = ledger.WithdrawalPending
	WithdrawalProcessing = ledger.WithdrawalProcessing
	WithdrawalCompleted  = ledger.WithdrawalCompleted
	WithdrawalFailed     = ledger.WithdrawalFailed
)

type withdrawal = ledger.Withdrawal

// withdrawalCopy is w as the API may keep it.
func withdrawalCopy(w *withdrawal) withdrawal {
	c := *w
	c.Merchant, c.Terminal = nil, nil
	return c
}

// CreateWithdrawal holds the money of a withdrawal on its terminal (the
// ledger's rule: amount+fee, or amount alone when SubtractFee).
func (b apiBackend) CreateWithdrawal(key string, in api.NewWithdrawal) (_ withdrawal, lerr *ledger.Error) {
	s := b.s
	s.begin()
	defer s.endInto(&lerr)
	w, lerr := ledger.CreateWithdrawal(s.st.core, s.merchants[key], in, s.tickLocked())
	if lerr != nil {
		return withdrawal{}, lerr
	}
	s.pilot.WithdrawalEntered(s.nowLocked(), w.ID, w.Status, w.Address)
	return withdrawalCopy(w), nil
}

// Withdrawal is the merchant's withdrawal id.
func (b apiBackend) Withdrawal(key, id string) (_ withdrawal, lerr *ledger.Error) {
	s := b.s
	s.begin()
	defer s.endInto(&lerr)
	w := s.st.core.Withdrawal(id)
	if w == nil || w.Merchant == nil || w.Merchant != s.merchants[key] {
		return withdrawal{}, &ledger.Error{Kind: ledger.NotFound, Code: spec.CodeWDR003, Message: "withdrawal not found"}
	}
	return withdrawalCopy(w), nil
}

// controlError is a rule's refusal as the Go controls return it: wrapping
// the sentinel of its kind (the HTTP controls map that to a status).
func controlError(e *ledger.Error) error {
	if e == nil {
		return nil
	}
	sentinel := ErrInvalidArgument
	switch e.Kind {
	case ledger.NotFound:
		sentinel = ErrNotFound
	case ledger.WrongState, ledger.Conflict:
		sentinel = ErrWrongState
	}
	return fmt.Errorf("%w: %s", sentinel, e.Message)
}

// SetWithdrawalStatus plays the blockchain side of a withdrawal: pending
// may move to processing, completed or failed, processing to completed or
// failed. completed takes the frozen sum off the terminal for good; failed
// releases it back to the available balance. txHash, when not empty, is
// recorded as tx_hash; completing without one records a random 64-hex hash.
func (s *Server) SetWithdrawalStatus(id, status, txHash string) error {
	_, err := s.setWithdrawalStatus(id, status, txHash)
	return err
}

func (s *Server) setWithdrawalStatus(id, status, txHash string) (_ *api.WithdrawalBody, err error) {
	s.begin()
	defer s.endErr(&err)
	now := s.tickLocked().Truncate(time.Second)
	if lerr := ledger.CheckWithdrawalTarget(status); lerr != nil {
		return nil, controlError(lerr)
	}
	if utf8.RuneCountInString(txHash) > MaxTxHashLength {
		return nil, fmt.Errorf("%w: tx_hash must be at most %d characters", ErrInvalidArgument, MaxTxHashLength)
	}
	w := s.st.core.Withdrawal(id)
	if w == nil {
		return nil, notFound("withdrawal", id)
	}
	if lerr := ledger.ChangeWithdrawal(s.st.core, w, status, txHash, now); lerr != nil {
		return nil, controlError(lerr)
	}
	s.pilot.WithdrawalEntered(s.nowLocked(), w.ID, status, w.Address)
	v := api.WithdrawalView(w)
	// A withdrawal has no notify_url: its notifications go to the listen
	// feed only.
	s.notifyLocked(hook{Key: "withdrawal:" + w.ID, Resource: "withdrawal", ID: w.ID, Status: status, At: now},
		w.Merchant, "", "", v)
	return &v, nil
}
