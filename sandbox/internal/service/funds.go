package service

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
func (s *Service) Terminals(key string) []terminal {
	s.begin()
	defer s.commit()
	m := s.tx.Merchant(key)
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
func (s *Service) Transfer(key, fromID, toID string, amount decimal.Decimal) (lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	return ledger.TransferFunds(s.tx, s.tx.Merchant(key), fromID, toID, amount)
}

type withdrawal = ledger.Withdrawal

// withdrawalCopy is w as the API may keep it.
func withdrawalCopy(w *withdrawal) withdrawal {
	c := *w
	c.Merchant, c.Terminal = nil, nil
	return c
}

// CreateWithdrawal holds the money of a withdrawal on its terminal (the
// ledger's rule: amount+fee, or amount alone when SubtractFee).
func (s *Service) CreateWithdrawal(key string, in api.NewWithdrawal) (_ withdrawal, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	w, lerr := ledger.CreateWithdrawal(s.tx, s.tx.Merchant(key), in, s.tickLocked())
	if lerr != nil {
		return withdrawal{}, lerr
	}
	s.pilot.WithdrawalEntered(s.nowLocked(), w.ID, w.Status, w.Address)
	return withdrawalCopy(w), nil
}

// Withdrawal is the merchant's withdrawal id.
func (s *Service) Withdrawal(key, id string) (_ withdrawal, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	w := s.tx.Withdrawal(id)
	if w == nil || w.Merchant == nil || w.Merchant.APIKey != key {
		return withdrawal{}, &ledger.Error{Kind: ledger.NotFound, Code: spec.CodeWDR003, Message: "withdrawal not found"}
	}
	return withdrawalCopy(w), nil
}

// SetWithdrawalStatus plays the blockchain side of a withdrawal (see
// sandbox.Server.SetWithdrawalStatus) and returns the withdrawal's view.
func (s *Service) SetWithdrawalStatus(id, status, txHash string) (_ any, err error) {
	s.begin()
	defer s.endErr(&err)
	now := s.tickLocked().Truncate(time.Second)
	if lerr := ledger.CheckWithdrawalTarget(status); lerr != nil {
		return nil, controlError(lerr)
	}
	if utf8.RuneCountInString(txHash) > api.MaxTxHashLength {
		return nil, refusal(ledger.Invalid, fmt.Sprintf("tx_hash must be at most %d characters", api.MaxTxHashLength))
	}
	w := s.tx.Withdrawal(id)
	if w == nil {
		return nil, notFound("withdrawal", id)
	}
	if lerr := ledger.ChangeWithdrawal(s.tx, w, status, txHash, now); lerr != nil {
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
