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

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

type terminalView struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Balance       api.USDT `json:"balance"`
	BalanceFrozen api.USDT `json:"balance_frozen"`
	WithdrawalFee api.USDT `json:"withdrawal_fee"`
	Currency      string   `json:"currency"`
	IsActive      bool     `json:"is_active"`
}

func (s *Server) listTerminals(_ *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	out := make([]terminalView, 0, len(m.Terminals))
	for _, t := range m.Terminals {
		out = append(out, terminalView{ID: t.ID, Name: t.Name, Balance: api.USDT(t.Available),
			BalanceFrozen: api.USDT(t.Frozen), WithdrawalFee: api.USDT(t.Fee), Currency: "USDT", IsActive: t.Active})
	}
	return map[string]any{"terminals": out}, nil
}

type balanceView struct {
	Balance       api.USDT `json:"balance"`
	BalanceFrozen api.USDT `json:"balance_frozen"`
	Currency      string   `json:"currency"`
}

// getBalance sums every terminal of the merchant, inactive ones included:
// their money is still the merchant's.
func (s *Server) getBalance(_ *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	var bal, frozen decimal.Decimal
	for _, t := range m.Terminals {
		bal = bal.Add(t.Available)
		frozen = frozen.Add(t.Frozen)
	}
	return balanceView{Balance: api.USDT(bal), BalanceFrozen: api.USDT(frozen), Currency: "USDT"}, nil
}

// usdtPrecise reports whether d has at most six decimal places, the
// precision of TRC-20 USDT (ledger.USDTPrecise).
func usdtPrecise(d decimal.Decimal) bool { return ledger.USDTPrecise(d) }

// usdtScaleMessage is the TRF_001 and WDR_001 message of a finer USDT
// amount.
var usdtScaleMessage = fmt.Sprintf("USDT amounts have at most %d decimal places (TRC-20 precision)", ledger.USDTDecimals)

type transferReq struct {
	FromTerminalID string     `json:"from_terminal_id"`
	ToTerminalID   string     `json:"to_terminal_id"`
	Amount         api.Amount `json:"amount"`
}

type transferView struct {
	Success        bool     `json:"success"`
	FromTerminalID string   `json:"from_terminal_id"`
	ToTerminalID   string   `json:"to_terminal_id"`
	Amount         api.USDT `json:"amount"`
	Currency       string   `json:"currency"`
}

// createTransfer moves USDT between two terminals of the merchant under the
// one lock, so no reader ever sees the debit without the credit.
func (s *Server) createTransfer(_ *http.Request, m *merchant, body []byte) (any, *api.Error) {
	var req transferReq
	if err := api.DecodeJSON(body, &req); err != nil {
		return nil, api.Invalid("TRF_001", "body", "request body is not valid JSON: "+err.Error())
	}
	switch {
	case req.FromTerminalID == "" || req.ToTerminalID == "":
		return nil, api.Invalid("TRF_001", "terminal_id", "from_terminal_id and to_terminal_id are required")
	case req.FromTerminalID == req.ToTerminalID:
		return nil, api.Invalid("TRF_001", "to_terminal_id", "source and destination terminals must differ")
	case !req.Amount.Set || !req.Amount.D.IsPositive():
		return nil, api.Invalid("TRF_001", "amount", "amount must be positive")
	case !usdtPrecise(req.Amount.D):
		return nil, api.Invalid("TRF_001", "amount", usdtScaleMessage)
	}
	s.begin()
	defer s.commit()
	from, to := m.Terminal(req.FromTerminalID), m.Terminal(req.ToTerminalID)
	if from == nil || to == nil {
		return nil, api.NewError(http.StatusNotFound, "TRF_002", "terminal not found")
	}
	if lerr := ledger.Transfer(&from.Balance, &to.Balance, req.Amount.D); lerr != nil {
		return nil, api.FromLedger(lerr)
	}
	m.Transfers++
	s.st.saveTerminal(m, from)
	s.st.saveTerminal(m, to)
	s.st.saveMerchant(m)
	return transferView{Success: true, FromTerminalID: from.ID, ToTerminalID: to.ID,
		Amount: api.USDT(req.Amount.D), Currency: "USDT"}, nil
}

// Withdrawal statuses.
const (
	WithdrawalPending    = ledger.WithdrawalPending
	WithdrawalProcessing = ledger.WithdrawalProcessing
	WithdrawalCompleted  = ledger.WithdrawalCompleted
	WithdrawalFailed     = ledger.WithdrawalFailed
)

type withdrawal = ledger.Withdrawal

type withdrawalView struct {
	ID        string   `json:"id"`
	Amount    api.USDT `json:"amount"`
	Fee       api.USDT `json:"fee"`
	Currency  string   `json:"currency"`
	Address   string   `json:"address"`
	TxHash    *string  `json:"tx_hash"`
	Status    string   `json:"status"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at"`
}

func withdrawalViewOf(w *withdrawal) withdrawalView {
	v := withdrawalView{ID: w.ID, Amount: api.USDT(w.Amount), Fee: api.USDT(w.Fee), Currency: "USDT",
		Address: w.Address, Status: w.Status, CreatedAt: api.Timestamp(w.CreatedAt), UpdatedAt: api.Timestamp(w.UpdatedAt)}
	if w.TxHash != "" {
		h := w.TxHash
		v.TxHash = &h
	}
	return v
}

type withdrawalReq struct {
	TerminalID            string     `json:"terminal_id"`
	Amount                api.Amount `json:"amount"`
	Address               string     `json:"address"`
	SubtractFeeFromAmount bool       `json:"subtract_fee_from_amount"`
}

// createWithdrawal freezes amount+fee on the terminal (amount alone when
// subtract_fee_from_amount is true, the wallet then receiving amount-fee).
// The response's amount is always the requested amount and fee the
// terminal's fee. An unknown or inactive terminal is WDR_001: the spec has
// no terminal-not-found code for withdrawals.
func (s *Server) createWithdrawal(_ *http.Request, m *merchant, body []byte) (any, *api.Error) {
	var req withdrawalReq
	if err := api.DecodeJSON(body, &req); err != nil {
		return nil, api.Invalid("WDR_001", "body", "request body is not valid JSON: "+err.Error())
	}
	switch {
	case req.TerminalID == "":
		return nil, api.Invalid("WDR_001", "terminal_id", "terminal_id is required")
	case !req.Amount.Set || !req.Amount.D.IsPositive():
		return nil, api.Invalid("WDR_001", "amount", "amount must be positive")
	case !usdtPrecise(req.Amount.D):
		return nil, api.Invalid("WDR_001", "amount", usdtScaleMessage)
	case strings.TrimSpace(req.Address) == "":
		return nil, api.Invalid("WDR_001", "address", "address is required")
	case utf8.RuneCountInString(req.Address) > MaxAddressLength:
		return nil, api.Invalid("WDR_001", "address", fmt.Sprintf(api.MaxLengthMessageFormat, "address", MaxAddressLength))
	}
	s.begin()
	defer s.commit()
	now := s.tickLocked().Truncate(time.Second)
	t := m.Terminal(req.TerminalID)
	if t == nil {
		return nil, api.Invalid("WDR_001", "terminal_id", "terminal not found or not active")
	}
	held, lerr := ledger.HoldWithdrawal(&t.Balance, t.Active, t.Fee, req.Amount.D, req.SubtractFeeFromAmount)
	if lerr != nil {
		return nil, api.FromLedger(lerr)
	}
	s.st.saveTerminal(m, t)
	w := &withdrawal{Merchant: m, Terminal: t, ID: uuid.NewString(), Amount: req.Amount.D, Fee: t.Fee, Held: held,
		Address: req.Address, Status: WithdrawalPending, CreatedAt: now, UpdatedAt: now}
	s.st.addWithdrawal(w)
	s.pilot.WithdrawalEntered(s.nowLocked(), w.ID, w.Status, w.Address)
	return withdrawalViewOf(w), nil
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

func (s *Server) getWithdrawal(r *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	w := s.st.withdrawal(r.PathValue("id"))
	if w == nil || w.Merchant != m {
		return nil, api.NewError(http.StatusNotFound, "WDR_003", "withdrawal not found")
	}
	return withdrawalViewOf(w), nil
}

type feeView struct {
	Fee      api.USDT `json:"fee"`
	Currency string   `json:"currency"`
}

// getWithdrawalFee answers the fee of the merchant's first active terminal
// (the endpoint takes no terminal); each terminal's own fee is in
// GET /v1/terminals.
func (s *Server) getWithdrawalFee(_ *http.Request, m *merchant, _ []byte) (any, *api.Error) {
	s.begin()
	defer s.commit()
	fee := decimal.Zero
	for _, t := range m.Terminals {
		if t.Active {
			fee = t.Fee
			break
		}
	}
	return feeView{Fee: api.USDT(fee), Currency: "USDT"}, nil
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
	v := withdrawalViewOf(w)
	return &v, nil
}
