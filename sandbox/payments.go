package sandbox

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Payment statuses, upper case as the spec writes them (the ledger's).
const (
	statusPending         = ledger.PaymentPending
	statusProcessing      = ledger.PaymentProcessing
	statusCompleted       = ledger.PaymentCompleted
	statusCancelled       = ledger.PaymentCancelled
	statusDispute         = ledger.PaymentDispute
	statusCancelledAppeal = ledger.PaymentCancelledAppeal
)

const (
	methodCard        = spec.MethodCard
	methodSBP         = spec.MethodSBP
	methodSIM         = spec.MethodSIM
	methodCrossBorder = spec.MethodCrossBorder
)

type payment = ledger.Payment

type dispute = ledger.Dispute

// amountKey groups equal amounts (1500.5 and 1500.50) for PAY_005.
func amountKey(d decimal.Decimal) string { return d.String() }

// tickLocked returns the sandbox time and expires what is due.
func (s *Server) tickLocked() time.Time {
	now := s.nowLocked()
	s.expireDueLocked(now)
	return now
}

// movePaymentLocked moves p by event through the ledger's rule
// (ledger.MovePayment, the payment state machine), and on success runs
// apply (what the move records beside the status: a receipt, a dispute),
// keeps the money it credited and the payment, tells the autopilot and
// queues the webhook: the one way a payment changes status, so the
// same-amount counter, the credit and the webhook can never be forgotten.
// A refusal changes nothing.
func (s *Server) movePaymentLocked(p *payment, event ledger.PaymentEvent, apply func()) *ledger.Error {
	was := p.Status
	bal := p.Terminal.Balance
	credited, lerr := ledger.MovePayment(p, &bal, event)
	if lerr != nil {
		return lerr
	}
	if apply != nil {
		apply()
	}
	if !credited.IsZero() {
		p.Terminal.Balance = bal
		s.st.saveTerminal(p.Merchant, p.Terminal)
	}
	status := p.Status
	s.st.savePayment(p, was)
	if s.pilot != nil {
		comment := ""
		if p.Dispute != nil {
			comment = p.Dispute.Comment
		}
		s.pilot.PaymentEntered(s.nowLocked(), p.ID, status, p.Amount, comment)
	}
	if p.NotifyURL != "" {
		s.enqueueLocked(hook{Key: "payment:" + p.ID, Resource: "payment", ID: p.ID, Status: status, At: s.nowLocked()},
			p.NotifyURL, p.Token, api.PaymentView(p))
	}
	return nil
}

// unknownMerchant is the refusal of a change for an API key no merchant
// has: the API authenticates first, so only a key removed by a reset in
// between meets it.
var unknownMerchant = &ledger.Error{Kind: ledger.Invalid, Code: spec.CodeAUTH001, Message: "unknown API key"}

// CreatePayment creates a payment from a request the API checked field by
// field: what needs the state (a repeated ext_id, a bank and a terminal to
// offer, the same-amount limit) is decided here, in one section.
func (b apiBackend) CreatePayment(key string, in api.NewPayment) (payment, *ledger.Error) {
	s := b.s
	s.begin()
	defer s.commit()
	now := s.tickLocked()
	m := s.merchants[key]
	if m == nil {
		return payment{}, unknownMerchant
	}
	if s.st.paymentByExt(m, in.ExtID) != nil {
		return payment{}, &ledger.Error{Kind: ledger.Conflict, Code: spec.CodePAY003, Field: "ext_id",
			Message: "a payment with this ext_id already exists"}
	}
	bk, country, lerr := pickBank(s.banks, in.Method, in.Bank, in.Country)
	if lerr != nil {
		return payment{}, lerr
	}
	var term *terminal
	for _, t := range m.Terminals {
		if t.Active {
			term = t
			break
		}
	}
	if term == nil {
		return payment{}, noRequisites("the merchant has no active terminal")
	}
	if s.pilot.RefusesCreate(in.Amount) { // the autopilot's test value 404.04 (testvalues.go)
		return payment{}, testAmountRefused
	}
	if s.st.pendingWithAmount(m, amountKey(in.Amount)) >= s.cfg.MaxSamePendingAmount {
		return payment{}, &ledger.Error{Kind: ledger.TooMany, Code: spec.CodePAY005,
			Message: "too many pending payments with the same amount"}
	}

	p := &payment{
		Merchant: m, Terminal: term, ID: uuid.NewString(), ExtID: in.ExtID, Amount: in.Amount, Method: in.Method,
		Bank: ledger.Bank(bk), Holder: holders[rand.IntN(len(holders))], ClientID: in.ClientID,
		NotifyURL: in.NotifyURL, Token: in.Token, Status: statusPending,
		CreatedAt: now.Truncate(time.Second), USDTRate: s.cfg.USDTRate,
	}
	p.ValidUntil = p.CreatedAt.Add(s.cfg.PaymentTTL)
	p.PaymentURL = in.BaseURL + "/pay/" + p.ID
	switch in.Method {
	case methodCard:
		p.ReqType, p.ReqValue = "card", cardNumber()
	case methodSBP:
		p.ReqType, p.ReqValue = "sbp", digits("+79", 9)
	case methodSIM:
		p.ReqType, p.ReqValue = "sim", digits("+79", 9)
	case methodCrossBorder:
		c := countries[country]
		p.ReqType, p.ReqValue = "phone", digits(c.prefix, c.digits)
		p.Country, p.Currency = country, c.currency
		p.AmountLocal = in.Amount.Mul(s.rates[country]).Round(2)
	}
	s.st.addPayment(p)
	s.armExpiryLocked(now)
	s.pilot.PaymentCreated(now, p.ID, in.Amount)
	return paymentCopy(p), nil
}

// noRequisites is PAY_004: nothing to offer the payer.
func noRequisites(why string) *ledger.Error {
	return &ledger.Error{Kind: ledger.Unavailable, Code: spec.CodePAY004, Message: "no requisites available: " + why}
}

// pickBank applies the bank and country filters of a create request. A
// code that is unknown, inactive, or of the wrong country leaves no
// requisites to offer, hence PAY_004 rather than PAY_002.
func pickBank(banks []bank, method, code, country string) (bank, string, *ledger.Error) {
	none := func(why string) (bank, string, *ledger.Error) {
		return bank{}, "", noRequisites(why)
	}
	want := "RU"
	if method == methodCrossBorder {
		want = country
	}
	if code == "" {
		if want == "" {
			want = countryOrder[0]
		}
		b, ok := firstActiveBank(banks, want)
		if !ok {
			return none("no active bank")
		}
		return b, want, nil
	}
	b, ok := findBank(banks, code)
	if !ok {
		return none("unknown bank " + strconv.Quote(code))
	}
	if !b.IsActive {
		return none("bank " + code + " is not active")
	}
	if method == methodCrossBorder && b.Country == "RU" || want != "" && b.Country != want {
		return none("bank " + code + " does not serve this method or country")
	}
	return b, b.Country, nil
}

// firstActiveBank returns the first active bank of a country, in list order.
func firstActiveBank(banks []bank, country string) (bank, bool) {
	for _, b := range banks {
		if b.Country == country && b.IsActive {
			return b, true
		}
	}
	return bank{}, false
}

var holders = []string{"Ivan P.", "Anna S.", "Olga K.", "Dmitry V.", "Elena M.", "Sergey N."}

// digits returns prefix followed by n random decimal digits.
func digits(prefix string, n int) string {
	b := []byte(prefix)
	for range n {
		b = append(b, byte('0'+rand.IntN(10)))
	}
	return string(b)
}

// cardNumber returns a random 16-digit card number (Mir range 2200) with a
// valid Luhn check digit, so that client-side card validators accept it.
func cardNumber() string {
	b := []byte(digits("2200", 11))
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

// lookupPayment finds a payment of m by id; another merchant's payment is
// not found, exactly like a missing one.
func (s *Server) lookupPayment(m *merchant, id string) (*payment, *ledger.Error) {
	p := s.st.payment(id)
	if p == nil || m == nil || p.Merchant != m {
		return nil, paymentNotFound
	}
	return p, nil
}

// paymentNotFound is PAY_006.
var paymentNotFound = &ledger.Error{Kind: ledger.NotFound, Code: spec.CodePAY006, Message: "payment not found"}

// paymentCopy is p as the API may keep it: its own copy of the dispute,
// and no way back to the live merchant or terminal.
func paymentCopy(p *payment) payment {
	c := *p
	c.Merchant, c.Terminal = nil, nil
	if p.Dispute != nil {
		d := *p.Dispute
		if d.Amount != nil {
			a := *d.Amount
			d.Amount = &a
		}
		c.Dispute = &d
	}
	return c
}

// Payment is the merchant's payment id, expiry applied.
func (b apiBackend) Payment(key, id string) (payment, *ledger.Error) {
	return b.changePayment(key, id, func(*payment) *ledger.Error { return nil })
}

// PaymentByExtID is the merchant's payment by its ext_id.
func (b apiBackend) PaymentByExtID(key, extID string) (payment, *ledger.Error) {
	s := b.s
	s.begin()
	defer s.commit()
	s.tickLocked()
	m := s.merchants[key]
	if m == nil {
		return payment{}, paymentNotFound
	}
	p := s.st.paymentByExt(m, extID)
	if p == nil {
		return payment{}, paymentNotFound
	}
	return paymentCopy(p), nil
}

// changePayment runs change on the merchant's payment id in one section
// (expiry applied first) and returns the payment as it left it.
func (b apiBackend) changePayment(key, id string, change func(*payment) *ledger.Error) (payment, *ledger.Error) {
	s := b.s
	s.begin()
	defer s.commit()
	s.tickLocked()
	p, lerr := s.lookupPayment(s.merchants[key], id)
	if lerr != nil {
		return payment{}, lerr
	}
	if lerr := change(p); lerr != nil {
		return payment{}, lerr
	}
	return paymentCopy(p), nil
}

// ConfirmPayment is the API's confirm, with the receipt's size.
func (b apiBackend) ConfirmPayment(key, id string, receipt int) (payment, *ledger.Error) {
	return b.changePayment(key, id, func(p *payment) *ledger.Error { return b.s.confirmLocked(p, receipt) })
}

// CancelPayment cancels a PENDING payment.
func (b apiBackend) CancelPayment(key, id string) (payment, *ledger.Error) {
	return b.changePayment(key, id, func(p *payment) *ledger.Error {
		return b.s.movePaymentLocked(p, ledger.Cancel, nil)
	})
}

// OpenDispute opens d, dated now, on a cancelled payment.
func (b apiBackend) OpenDispute(key, id string, d dispute) (payment, *ledger.Error) {
	return b.changePayment(key, id, func(p *payment) *ledger.Error {
		d.CreatedAt = b.s.nowLocked().Truncate(time.Second)
		return b.s.movePaymentLocked(p, ledger.OpenDispute, func() { p.Dispute = &d })
	})
}

// CancelDispute withdraws an open dispute.
func (b apiBackend) CancelDispute(key, id string) (payment, *ledger.Error) {
	return b.changePayment(key, id, func(p *payment) *ledger.Error {
		return b.s.movePaymentLocked(p, ledger.CancelDispute, nil)
	})
}

// confirmLocked is the payer's "I paid" (the API's confirm, the payer
// page), keeping the size of the receipt sent with it.
func (s *Server) confirmLocked(p *payment, receipt int) *ledger.Error {
	return s.movePaymentLocked(p, ledger.Confirm, func() { p.Receipt = receipt })
}

// Outcomes accepted by VerifyPayment and ReviewDispute.
const (
	OutcomeCompleted = ledger.OutcomeCompleted
	OutcomeCancelled = ledger.OutcomeCancelled
	OutcomeApproved  = ledger.OutcomeApproved
	OutcomeRejected  = ledger.OutcomeRejected
)

// VerifyPayment plays the service's verification of a PROCESSING payment:
// "completed" completes it and credits amount/usdt_rate USDT to its
// terminal, "cancelled" cancels it (transfer not found).
func (s *Server) VerifyPayment(id, outcome string) error {
	_, err := s.verifyPayment(id, outcome)
	return s.orStoreErr(err)
}

func (s *Server) verifyPayment(id, outcome string) (*api.PaymentBody, error) {
	event, lerr := ledger.VerifyEvent(outcome)
	return s.controlPayment(id, event, lerr)
}

// ReviewDispute plays the review of an open dispute: "approved" completes
// the payment and credits its terminal (with the dispute's amount when one
// was given, else the payment's), "rejected" cancels it again.
func (s *Server) ReviewDispute(id, outcome string) error {
	_, err := s.reviewDispute(id, outcome)
	return s.orStoreErr(err)
}

func (s *Server) reviewDispute(id, outcome string) (*api.PaymentBody, error) {
	event, lerr := ledger.ReviewEvent(outcome)
	return s.controlPayment(id, event, lerr)
}

// controlPayment moves payment id by a control's event (or refuses the
// control's bad outcome, outcomeErr), in the controls' error form.
func (s *Server) controlPayment(id string, event ledger.PaymentEvent, outcomeErr *ledger.Error) (*api.PaymentBody, error) {
	s.begin()
	defer s.commit()
	s.tickLocked()
	if outcomeErr != nil {
		return nil, controlError(outcomeErr)
	}
	p := s.st.payment(id)
	if p == nil {
		return nil, notFound("payment", id)
	}
	if lerr := s.movePaymentLocked(p, event, nil); lerr != nil {
		return nil, controlError(lerr)
	}
	v := api.PaymentView(p)
	return &v, nil
}
