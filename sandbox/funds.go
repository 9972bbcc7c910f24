package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

type terminalView struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Balance       usdtNum `json:"balance"`
	BalanceFrozen usdtNum `json:"balance_frozen"`
	WithdrawalFee usdtNum `json:"withdrawal_fee"`
	Currency      string  `json:"currency"`
	IsActive      bool    `json:"is_active"`
}

func (s *Server) listTerminals(_ *http.Request, m *merchant, _ []byte) (any, *apiError) {
	s.begin()
	defer s.commit()
	out := make([]terminalView, 0, len(m.terminals))
	for _, t := range m.terminals {
		out = append(out, terminalView{ID: t.id, Name: t.name, Balance: usdtNum(t.balance),
			BalanceFrozen: usdtNum(t.frozen), WithdrawalFee: usdtNum(t.fee), Currency: "USDT", IsActive: t.active})
	}
	return map[string]any{"terminals": out}, nil
}

type balanceView struct {
	Balance       usdtNum `json:"balance"`
	BalanceFrozen usdtNum `json:"balance_frozen"`
	Currency      string  `json:"currency"`
}

// getBalance sums every terminal of the merchant, inactive ones included:
// their money is still the merchant's.
func (s *Server) getBalance(_ *http.Request, m *merchant, _ []byte) (any, *apiError) {
	s.begin()
	defer s.commit()
	var bal, frozen decimal.Decimal
	for _, t := range m.terminals {
		bal = bal.Add(t.balance)
		frozen = frozen.Add(t.frozen)
	}
	return balanceView{Balance: usdtNum(bal), BalanceFrozen: usdtNum(frozen), Currency: "USDT"}, nil
}

// usdtDecimals is the precision of TRC-20 USDT: a smaller amount cannot
// move on chain, so it must not enter a balance as sub-unit dust.
const usdtDecimals = 6

// usdtPrecise reports whether d has at most usdtDecimals decimal places
// (trailing zeros do not count: 1.5000000 is 1.5).
func usdtPrecise(d decimal.Decimal) bool {
	return d.Equal(d.Truncate(usdtDecimals))
}

func (m *merchant) terminal(id string) *terminal {
	for _, t := range m.terminals {
		if t.id == id {
			return t
		}
	}
	return nil
}

type transferReq struct {
	FromTerminalID string   `json:"from_terminal_id"`
	ToTerminalID   string   `json:"to_terminal_id"`
	Amount         amountIn `json:"amount"`
}

type transferView struct {
	Success        bool    `json:"success"`
	FromTerminalID string  `json:"from_terminal_id"`
	ToTerminalID   string  `json:"to_terminal_id"`
	Amount         usdtNum `json:"amount"`
	Currency       string  `json:"currency"`
}

// createTransfer moves USDT between two terminals of the merchant under the
// one lock, so no reader ever sees the debit without the credit.
func (s *Server) createTransfer(_ *http.Request, m *merchant, body []byte) (any, *apiError) {
	var req transferReq
	if err := decodeJSON(body, &req); err != nil {
		return nil, invalid("TRF_001", "body", "request body is not valid JSON: "+err.Error())
	}
	switch {
	case req.FromTerminalID == "" || req.ToTerminalID == "":
		return nil, invalid("TRF_001", "terminal_id", "from_terminal_id and to_terminal_id are required")
	case req.FromTerminalID == req.ToTerminalID:
		return nil, invalid("TRF_001", "to_terminal_id", "source and destination terminals must differ")
	case !req.Amount.set || !req.Amount.d.IsPositive():
		return nil, invalid("TRF_001", "amount", "amount must be positive")
	case !usdtPrecise(req.Amount.d):
		return nil, invalid("TRF_001", "amount", "USDT amounts have at most 6 decimal places (TRC-20 precision)")
	}
	s.begin()
	defer s.commit()
	from, to := m.terminal(req.FromTerminalID), m.terminal(req.ToTerminalID)
	if from == nil || to == nil {
		return nil, newErr(http.StatusNotFound, "TRF_002", "terminal not found")
	}
	if from.balance.LessThan(req.Amount.d) {
		return nil, newErr(http.StatusBadRequest, "TRF_003", "insufficient funds on the source terminal")
	}
	from.balance = from.balance.Sub(req.Amount.d)
	to.balance = to.balance.Add(req.Amount.d)
	m.transfers++
	s.st.saveTerminal(m, from)
	s.st.saveTerminal(m, to)
	s.st.saveMerchant(m)
	return transferView{Success: true, FromTerminalID: from.id, ToTerminalID: to.id,
		Amount: usdtNum(req.Amount.d), Currency: "USDT"}, nil
}

// Withdrawal statuses.
const (
	WithdrawalPending    = "pending"
	WithdrawalProcessing = "processing"
	WithdrawalCompleted  = "completed"
	WithdrawalFailed     = "failed"
)

type withdrawal struct {
	m         *merchant
	terminal  *terminal
	id        string
	amount    decimal.Decimal // as requested
	fee       decimal.Decimal
	held      decimal.Decimal // what was frozen: amount+fee, or amount when the fee is subtracted
	address   string
	txHash    string
	status    string
	createdAt time.Time
	updatedAt time.Time
}

type withdrawalView struct {
	ID        string  `json:"id"`
	Amount    usdtNum `json:"amount"`
	Fee       usdtNum `json:"fee"`
	Currency  string  `json:"currency"`
	Address   string  `json:"address"`
	TxHash    *string `json:"tx_hash"`
	Status    string  `json:"status"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

func (w *withdrawal) view() withdrawalView {
	v := withdrawalView{ID: w.id, Amount: usdtNum(w.amount), Fee: usdtNum(w.fee), Currency: "USDT",
		Address: w.address, Status: w.status, CreatedAt: ts(w.createdAt), UpdatedAt: ts(w.updatedAt)}
	if w.txHash != "" {
		h := w.txHash
		v.TxHash = &h
	}
	return v
}

type withdrawalReq struct {
	TerminalID            string   `json:"terminal_id"`
	Amount                amountIn `json:"amount"`
	Address               string   `json:"address"`
	SubtractFeeFromAmount bool     `json:"subtract_fee_from_amount"`
}

// createWithdrawal freezes amount+fee on the terminal (amount alone when
// subtract_fee_from_amount is true, the wallet then receiving amount-fee).
// The response's amount is always the requested amount and fee the
// terminal's fee. An unknown or inactive terminal is WDR_001: the spec has
// no terminal-not-found code for withdrawals.
func (s *Server) createWithdrawal(_ *http.Request, m *merchant, body []byte) (any, *apiError) {
	var req withdrawalReq
	if err := decodeJSON(body, &req); err != nil {
		return nil, invalid("WDR_001", "body", "request body is not valid JSON: "+err.Error())
	}
	switch {
	case req.TerminalID == "":
		return nil, invalid("WDR_001", "terminal_id", "terminal_id is required")
	case !req.Amount.set || !req.Amount.d.IsPositive():
		return nil, invalid("WDR_001", "amount", "amount must be positive")
	case !usdtPrecise(req.Amount.d):
		return nil, invalid("WDR_001", "amount", "USDT amounts have at most 6 decimal places (TRC-20 precision)")
	case strings.TrimSpace(req.Address) == "":
		return nil, invalid("WDR_001", "address", "address is required")
	case utf8.RuneCountInString(req.Address) > MaxAddressLength:
		return nil, invalid("WDR_001", "address", fmt.Sprintf(maxLengthMessageFormat, "address", MaxAddressLength))
	}
	s.begin()
	defer s.commit()
	now := s.tickLocked().Truncate(time.Second)
	t := m.terminal(req.TerminalID)
	if t == nil || !t.active {
		return nil, invalid("WDR_001", "terminal_id", "terminal not found or not active")
	}
	held := req.Amount.d.Add(t.fee)
	if req.SubtractFeeFromAmount {
		if !req.Amount.d.GreaterThan(t.fee) {
			return nil, invalid("WDR_001", "amount", "amount must exceed the fee when the fee is subtracted from it")
		}
		held = req.Amount.d
	}
	if t.balance.LessThan(held) {
		return nil, newErr(http.StatusBadRequest, "WDR_002", "insufficient funds")
	}
	t.balance = t.balance.Sub(held)
	t.frozen = t.frozen.Add(held)
	s.st.saveTerminal(m, t)
	w := &withdrawal{m: m, terminal: t, id: uuid.NewString(), amount: req.Amount.d, fee: t.fee, held: held,
		address: req.Address, status: WithdrawalPending, createdAt: now, updatedAt: now}
	s.st.addWithdrawal(w)
	s.pilot.withdrawalEntered(s.nowLocked(), w.id, w.status, w.address)
	return w.view(), nil
}

func (s *Server) getWithdrawal(r *http.Request, m *merchant, _ []byte) (any, *apiError) {
	s.begin()
	defer s.commit()
	w := s.st.withdrawal(r.PathValue("id"))
	if w == nil || w.m != m {
		return nil, newErr(http.StatusNotFound, "WDR_003", "withdrawal not found")
	}
	return w.view(), nil
}

type feeView struct {
	Fee      usdtNum `json:"fee"`
	Currency string  `json:"currency"`
}

// getWithdrawalFee answers the fee of the merchant's first active terminal
// (the endpoint takes no terminal); each terminal's own fee is in
// GET /v1/terminals.
func (s *Server) getWithdrawalFee(_ *http.Request, m *merchant, _ []byte) (any, *apiError) {
	s.begin()
	defer s.commit()
	fee := decimal.Zero
	for _, t := range m.terminals {
		if t.active {
			fee = t.fee
			break
		}
	}
	return feeView{Fee: usdtNum(fee), Currency: "USDT"}, nil
}

var withdrawalMoves = map[string][]string{
	WithdrawalPending:    {WithdrawalProcessing, WithdrawalCompleted, WithdrawalFailed},
	WithdrawalProcessing: {WithdrawalCompleted, WithdrawalFailed},
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

func (s *Server) setWithdrawalStatus(id, status, txHash string) (*withdrawalView, error) {
	s.begin()
	defer s.commit()
	now := s.tickLocked().Truncate(time.Second)
	switch status {
	case WithdrawalProcessing, WithdrawalCompleted, WithdrawalFailed:
	default:
		return nil, fmt.Errorf("%w: withdrawal status must be processing, completed or failed", ErrInvalidArgument)
	}
	if utf8.RuneCountInString(txHash) > MaxTxHashLength {
		return nil, fmt.Errorf("%w: tx_hash must be at most %d characters", ErrInvalidArgument, MaxTxHashLength)
	}
	w := s.st.withdrawal(id)
	if w == nil {
		return nil, notFound("withdrawal", id)
	}
	if !allowed(withdrawalMoves, w.status, status) {
		return nil, fmt.Errorf("%w: withdrawal %s is %s, cannot become %s", ErrWrongState, id, w.status, status)
	}
	switch status {
	case WithdrawalCompleted:
		w.terminal.frozen = w.terminal.frozen.Sub(w.held)
		if txHash == "" && w.txHash == "" {
			var b [32]byte
			rand.Read(b[:])
			txHash = hex.EncodeToString(b[:])
		}
	case WithdrawalFailed:
		w.terminal.frozen = w.terminal.frozen.Sub(w.held)
		w.terminal.balance = w.terminal.balance.Add(w.held)
	}
	if txHash != "" {
		w.txHash = txHash
	}
	w.status = status
	w.updatedAt = now
	s.st.saveWithdrawal(w)
	s.st.saveTerminal(w.m, w.terminal)
	s.pilot.withdrawalEntered(s.nowLocked(), w.id, status, w.address)
	v := w.view()
	return &v, nil
}
