package ledger

import (
	crand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// The creation rules: what a new payment, payout, withdrawal or transfer
// needs of the state (a fresh ext_id, a bank and a terminal to offer, the
// money), decided over a Store within the caller's transaction. The
// request's fields were checked one by one before (the API's rules); what
// the sandbox configures comes in as an Env. A refusal adds nothing.

// UnknownMerchant is the refusal of a change for an API key no merchant
// has: the API authenticates first, so only a key removed by a reset in
// between meets it.
var UnknownMerchant = &Error{Kind: Invalid, Code: spec.CodeAUTH001, Message: "unknown API key"}

// NewPayment is a create payment request with every field within the
// spec's rules.
type NewPayment struct {
	// ExtID is the merchant's order id, unique per merchant.
	ExtID string
	// Amount is in RUB, within the spec's bounds, at most two decimals.
	Amount decimal.Decimal
	// Method is CARD (the default), SBP, SIM or CROSS_BORDER.
	Method string
	// Bank is the bank code asked for, "" for any.
	Bank string
	// Country is a CROSS_BORDER payment's country, "" for the default.
	Country string
	// ClientID, NotifyURL and Token are kept as given.
	ClientID, NotifyURL, Token string
	// BaseURL is the prefix of the payment's payment_url (the sandbox's
	// own address as the request reached it, or its configured one): it
	// depends on the request, so it comes with it, not with the Env.
	BaseURL string
}

// NewPayout is a create payout request with every field within the
// spec's rules.
type NewPayout struct {
	// ExtID is the merchant's payout id, unique per merchant.
	ExtID string
	// Amount is in RUB, positive, at most two decimals.
	Amount decimal.Decimal
	// Method, Requisites, HolderName, Bank and NotifyURL as given.
	Method, Requisites, HolderName, Bank, NotifyURL string
}

// NewWithdrawal is a create withdrawal request with every field within
// the spec's rules.
type NewWithdrawal struct {
	// TerminalID is the terminal the money leaves.
	TerminalID string
	// Amount is in USDT, positive, at most six decimals.
	Amount decimal.Decimal
	// Address is the TRC-20 wallet.
	Address string
	// SubtractFee: the wallet receives amount minus the fee.
	SubtractFee bool
}

// Env is what the sandbox configures for a new payment.
type Env struct {
	// Now is the sandbox clock; the payment is dated to its second.
	Now time.Time
	// TTL is the span from created_at to valid_until.
	TTL time.Duration
	// USDTRate is RUB per USDT, fixed into the payment.
	USDTRate decimal.Decimal
	// LocalRates are the local currency units per RUB of each
	// cross-border country, for amount_local.
	LocalRates map[string]decimal.Decimal
	// Banks are the banks requisites come from, in their configured order.
	Banks []Bank
	// MaxSamePending is how many PENDING payments of one merchant may
	// share an amount before the next is PAY_005.
	MaxSamePending int
	// Refuse, when not nil, may refuse a payment of amount that passed
	// every other check but the same-amount cap (the autopilot's test
	// value): its refusal is answered as is.
	Refuse func(amount decimal.Decimal) *Error
	// IntN draws the requisites and the holder: a number in [0, n). nil
	// means math/rand/v2's.
	IntN func(n int) int
}

// ActiveTerminal is m's first active terminal, in configured order: the
// one that serves m's payments and whose fee GET /v1/withdrawals/fee
// answers. nil when none is active.
func (m *Merchant) ActiveTerminal() *Terminal {
	for _, t := range m.Terminals {
		if t.Active {
			return t
		}
	}
	return nil
}

// CreatePayment adds m's payment asked by in, PENDING, with requisites of
// a bank that serves it: PAY_003 for an ext_id m already used, PAY_004
// when there is nothing to offer (no such bank, no active one, no active
// terminal, or env.Refuse's test value), PAY_005 when m already has
// env.MaxSamePending PENDING payments of the amount. It returns the
// transaction's copy of the payment.
func CreatePayment(st TxnWrite, m *Merchant, in NewPayment, env Env) (*Payment, *Error) {
	if m == nil {
		return nil, UnknownMerchant
	}
	if st.PaymentByExt(m, in.ExtID) != nil {
		return nil, &Error{Kind: Conflict, Code: spec.CodePAY003, Field: "ext_id",
			Message: "a payment with this ext_id already exists"}
	}
	bk, country, lerr := pickBank(env.Banks, in.Method, in.Bank, in.Country)
	if lerr != nil {
		return nil, lerr
	}
	term := m.ActiveTerminal()
	if term == nil {
		return nil, noRequisites("the merchant has no active terminal")
	}
	if env.Refuse != nil {
		if lerr := env.Refuse(in.Amount); lerr != nil {
			return nil, lerr
		}
	}
	if st.PendingWithAmount(m, AmountKey(in.Amount)) >= env.MaxSamePending {
		return nil, &Error{Kind: TooMany, Code: spec.CodePAY005,
			Message: "too many pending payments with the same amount"}
	}

	intN := env.IntN
	if intN == nil {
		intN = rand.IntN
	}
	p := &Payment{
		Merchant: m, Terminal: term, ID: uuid.NewString(), ExtID: in.ExtID, Amount: in.Amount, Method: in.Method,
		Bank: bk, Holder: holders[intN(len(holders))], ClientID: in.ClientID,
		NotifyURL: in.NotifyURL, Token: in.Token, Status: PaymentPending,
		CreatedAt: env.Now.Truncate(time.Second), USDTRate: env.USDTRate,
	}
	p.ValidUntil = p.CreatedAt.Add(env.TTL)
	p.PaymentURL = in.BaseURL + "/pay/" + p.ID
	switch in.Method {
	case spec.MethodCard:
		p.ReqType, p.ReqValue = "card", cardNumber(intN)
	case spec.MethodSBP:
		p.ReqType, p.ReqValue = "sbp", digits(intN, "+79", 9)
	case spec.MethodSIM:
		p.ReqType, p.ReqValue = "sim", digits(intN, "+79", 9)
	case spec.MethodCrossBorder:
		c := Countries[country]
		p.ReqType, p.ReqValue = "phone", digits(intN, c.Prefix, c.Digits)
		p.Country, p.Currency = country, c.Currency
		p.AmountLocal = in.Amount.Mul(env.LocalRates[country]).Round(2)
	}
	st.AddPayment(p)
	return p, nil
}

// noRequisites is PAY_004: nothing to offer the payer.
func noRequisites(why string) *Error {
	return &Error{Kind: Unavailable, Code: spec.CodePAY004, Message: "no requisites available: " + why}
}

// pickBank applies the bank and country filters of a create request. A
// code that is unknown, inactive, or of the wrong country leaves no
// requisites to offer, hence PAY_004 rather than PAY_002.
func pickBank(banks []Bank, method, code, country string) (Bank, string, *Error) {
	none := func(why string) (Bank, string, *Error) {
		return Bank{}, "", noRequisites(why)
	}
	want := "RU"
	if method == spec.MethodCrossBorder {
		want = country
	}
	if code == "" {
		if want == "" {
			want = spec.Countries[0] // neither country nor bank: the spec's first
		}
		for _, b := range banks {
			if b.Country == want && b.IsActive {
				return b, want, nil
			}
		}
		return none("no active bank")
	}
	b, ok := FindBank(banks, code)
	if !ok {
		return none("unknown bank " + strconv.Quote(code))
	}
	if !b.IsActive {
		return none("bank " + code + " is not active")
	}
	if method == spec.MethodCrossBorder && b.Country == "RU" || want != "" && b.Country != want {
		return none("bank " + code + " does not serve this method or country")
	}
	return b, b.Country, nil
}

// FindBank is the bank of code in banks.
func FindBank(banks []Bank, code string) (Bank, bool) {
	for _, b := range banks {
		if b.Code == code {
			return b, true
		}
	}
	return Bank{}, false
}

// Country is how a cross-border country's requisites look.
type Country struct {
	// Currency is the payment's currency there.
	Currency string
	// Prefix and Digits make its phone numbers: the international
	// dialling prefix and how many digits follow.
	Prefix string
	Digits int
}

// Countries are the cross-border countries a payment can go to: the
// spec's. Read only.
var Countries = map[string]Country{
	"TJ": {"TJS", "+992", 9},
	"KZ": {"KZT", "+77", 9},
	"UZ": {"UZS", "+998", 9},
	"KG": {"KGS", "+996", 9},
}

var holders = []string{"Ivan P.", "Anna S.", "Olga K.", "Dmitry V.", "Elena M.", "Sergey N."}

// digits returns prefix followed by n random decimal digits.
func digits(intN func(int) int, prefix string, n int) string {
	b := []byte(prefix)
	for range n {
		b = append(b, byte('0'+intN(10)))
	}
	return string(b)
}

// cardNumber returns a random 16-digit card number (Mir range 2200) with a
// valid Luhn check digit, so that client-side card validators accept it.
func cardNumber(intN func(int) int) string {
	b := []byte(digits(intN, "2200", 11))
	sum := 0
	for i := len(b) - 1; i >= 0; i-- {
		d := int(b[i] - '0')
		if (len(b)-1-i)%2 == 0 { // these digits are doubled once the check digit is appended
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return string(append(b, byte('0'+(10-sum%10)%10)))
}

// CreatePayout adds m's payout asked by in, pending and dated now to the
// second: PAY_003 for an ext_id m already used. It returns the
// transaction's copy.
func CreatePayout(st TxnWrite, m *Merchant, in NewPayout, now time.Time) (*Payout, *Error) {
	if m == nil {
		return nil, UnknownMerchant
	}
	if st.PayoutByExt(m, in.ExtID) != nil {
		return nil, &Error{Kind: Conflict, Code: spec.CodePAY003, Field: "ext_id",
			Message: "a payout with this ext_id already exists"}
	}
	p := &Payout{Merchant: m, ID: uuid.NewString(), ExtID: in.ExtID, Amount: in.Amount, Method: in.Method,
		Requisites: in.Requisites, HolderName: in.HolderName, Bank: in.Bank, NotifyURL: in.NotifyURL,
		Status: PayoutPending, CreatedAt: now.Truncate(time.Second)}
	st.AddPayout(p)
	return p, nil
}

// CreateWithdrawal adds m's withdrawal asked by in, pending and dated now
// to the second, its money held on the terminal (HoldWithdrawal): WDR_001
// for a terminal m does not have or that is inactive (the spec has no
// terminal-not-found code for withdrawals), WDR_001 or WDR_002 as
// HoldWithdrawal refuses. It returns the transaction's copy.
func CreateWithdrawal(st TxnWrite, m *Merchant, in NewWithdrawal, now time.Time) (*Withdrawal, *Error) {
	if m == nil {
		return nil, UnknownMerchant
	}
	t := m.Terminal(in.TerminalID)
	if t == nil {
		return nil, &Error{Kind: Invalid, Code: spec.CodeWDR001, Field: "terminal_id",
			Message: "terminal not found or not active"}
	}
	held, lerr := HoldWithdrawal(&t.Balance, t.Active, t.Fee, in.Amount, in.SubtractFee)
	if lerr != nil {
		return nil, lerr
	}
	st.SaveTerminal(m, t)
	now = now.Truncate(time.Second)
	w := &Withdrawal{Merchant: m, Terminal: t, ID: uuid.NewString(), Amount: in.Amount, Fee: t.Fee, Held: held,
		Address: in.Address, Status: WithdrawalPending, CreatedAt: now, UpdatedAt: now}
	st.AddWithdrawal(w)
	return w, nil
}

// TransferFunds moves amount USDT between two of m's terminals, both or
// neither (Transfer), and counts it: TRF_002 when m has no terminal of
// either id, TRF_003 when the source has too little.
func TransferFunds(st TxnWrite, m *Merchant, fromID, toID string, amount decimal.Decimal) *Error {
	if m == nil {
		return UnknownMerchant
	}
	from, to := m.Terminal(fromID), m.Terminal(toID)
	if from == nil || to == nil {
		return &Error{Kind: NotFound, Code: spec.CodeTRF002, Message: "terminal not found"}
	}
	if lerr := Transfer(&from.Balance, &to.Balance, amount); lerr != nil {
		return lerr
	}
	m.Transfers++
	st.SaveTerminal(m, from)
	st.SaveTerminal(m, to)
	st.SaveMerchant(m)
	return nil
}

// ChangePayment moves p by event (MovePayment) within the transaction:
// apply, when not nil, records what the move keeps beside the status (a
// receipt, a dispute), and the payment and the terminal it credited are
// saved. A refusal changes nothing.
func ChangePayment(st TxnWrite, p *Payment, e PaymentEvent, apply func()) *Error {
	bal := p.Terminal.Balance
	credited, lerr := MovePayment(p, &bal, e)
	if lerr != nil {
		return lerr
	}
	if apply != nil {
		apply()
	}
	if !credited.IsZero() {
		p.Terminal.Balance = bal
		st.SaveTerminal(p.Merchant, p.Terminal)
	}
	st.SavePayment(p)
	return nil
}

// ExpireDue cancels at most limit PENDING payments whose valid_until is
// not after now, earliest first, and returns them; more says that limit
// was reached, so more may be due (the caller commits and asks again, so
// that a backlog never makes one huge transaction).
func ExpireDue(st TxnWrite, now time.Time, limit int) (expired []*Payment, more bool) {
	due := st.DueExpiry(now, limit)
	for _, p := range due {
		if ChangePayment(st, p, Expire, nil) == nil { // due means PENDING: never refused
			expired = append(expired, p)
		}
	}
	return expired, len(due) >= limit
}

// ChangePayout moves p to status to at now (MovePayout) and saves it
// within the transaction. A refusal changes nothing.
func ChangePayout(st TxnWrite, p *Payout, to string, now time.Time) *Error {
	if lerr := MovePayout(p, to, now); lerr != nil {
		return lerr
	}
	st.SavePayout(p)
	return nil
}

// ChangeWithdrawal moves w to status to (MoveWithdrawal, which settles its
// held money on its terminal), records txHash when not empty (a random
// 64-hex one when it completes without any), dates the change now to the
// second, and saves w and its terminal within the transaction. A refusal
// changes nothing.
func ChangeWithdrawal(st TxnWrite, w *Withdrawal, to, txHash string, now time.Time) *Error {
	if lerr := MoveWithdrawal(w, &w.Terminal.Balance, to); lerr != nil {
		return lerr
	}
	if to == WithdrawalCompleted && txHash == "" && w.TxHash == "" {
		var b [32]byte
		crand.Read(b[:])
		txHash = hex.EncodeToString(b[:])
	}
	if txHash != "" {
		w.TxHash = txHash
	}
	w.UpdatedAt = now.Truncate(time.Second)
	st.SaveWithdrawal(w)
	st.SaveTerminal(w.Merchant, w.Terminal)
	return nil
}
