package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
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
// section, so no reader ever sees the debit without the credit.
func (b apiBackend) Transfer(key, fromID, toID string, amount decimal.Decimal) *ledger.Error {
	s := b.s
	s.begin()
	defer s.commit()
	m := s.merchants[key]
	if m == nil {
		return unknownMerchant
	}
	from, to := m.Terminal(fromID), m.Terminal(toID)
	if from == nil || to == nil {
		return &ledger.Error{Kind: ledger.NotFound, Code: spec.CodeTRF002, Message: "terminal not found"}
	}
	if lerr := ledger.Transfer(&from.Balance, &to.Balance, amount); lerr != nil {
		return lerr
	}
	m.Transfers++
	s.st.saveTerminal(m, from)
	s.st.saveTerminal(m, to)
	s.st.saveMerchant(m)
	return nil
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

// CreateWithdrawal freezes amount+fee on the terminal (amount alone when
// SubtractFee, the wallet then receiving amount-fee). An unknown or
// inactive terminal is WDR_001: the spec has no terminal-not-found code
// for withdrawals.
func (b apiBackend) CreateWithdrawal(key string, in api.NewWithdrawal) (withdrawal, *ledger.Error) {
	s := b.s
	s.begin()
	defer s.commit()
	now := s.tickLocked().Truncate(time.Second)
	m := s.merchants[key]
	if m == nil {
		return withdrawal{}, unknownMerchant
	}
	t := m.Terminal(in.TerminalID)
	if t == nil {
		return withdrawal{}, &ledger.Error{Kind: ledger.Invalid, Code: spec.CodeWDR001, Field: "terminal_id",
			Message: "terminal not found or not active"}
	}
	held, lerr := ledger.HoldWithdrawal(&t.Balance, t.Active, t.Fee, in.Amount, in.SubtractFee)
	if lerr != nil {
		return withdrawal{}, lerr
	}
	s.st.saveTerminal(m, t)
	w := &withdrawal{Merchant: m, Terminal: t, ID: uuid.NewString(), Amount: in.Amount, Fee: t.Fee, Held: held,
		Address: in.Address, Status: WithdrawalPending, CreatedAt: now, UpdatedAt: now}
	s.st.addWithdrawal(w)
	s.pilot.WithdrawalEntered(s.nowLocked(), w.ID, w.Status, w.Address)
	return withdrawalCopy(w), nil
}

// Withdrawal is the merchant's withdrawal id.
func (b apiBackend) Withdrawal(key, id string) (withdrawal, *ledger.Error) {
	s := b.s
	s.begin()
	defer s.commit()
	w := s.st.withdrawal(id)
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
	return s.orStoreErr(err)
}

func (s *Server) setWithdrawalStatus(id, status, txHash string) (*api.WithdrawalBody, error) {
	s.begin()
	defer s.commit()
	now := s.tickLocked().Truncate(time.Second)
	if lerr := ledger.CheckWithdrawalTarget(status); lerr != nil {
		return nil, controlError(lerr)
	}
	if utf8.RuneCountInString(txHash) > MaxTxHashLength {
		return nil, fmt.Errorf("%w: tx_hash must be at most %d characters", ErrInvalidArgument, MaxTxHashLength)
	}
	w := s.st.withdrawal(id)
	if w == nil {
		return nil, notFound("withdrawal", id)
	}
	lw := ledger.Withdrawal{ID: w.ID, Status: w.Status, Held: w.Held}
	if lerr := ledger.MoveWithdrawal(&lw, &w.Terminal.Balance, status); lerr != nil {
		return nil, controlError(lerr)
	}
	if status == WithdrawalCompleted && txHash == "" && w.TxHash == "" {
		var b [32]byte
		rand.Read(b[:])
		txHash = hex.EncodeToString(b[:])
	}
	if txHash != "" {
		w.TxHash = txHash
	}
	w.Status = lw.Status
	w.UpdatedAt = now
	s.st.saveWithdrawal(w)
	s.st.saveTerminal(w.Merchant, w.Terminal)
	s.pilot.WithdrawalEntered(s.nowLocked(), w.ID, status, w.Address)
	v := api.WithdrawalView(w)
	return &v, nil
}
