package service

import (
	"time"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

const (
	statusPending    = ledger.PaymentPending
	statusProcessing = ledger.PaymentProcessing
	statusDispute    = ledger.PaymentDispute
)

type payment = ledger.Payment

type dispute = ledger.Dispute

// tickLocked returns the sandbox time and expires what is due.
func (s *Service) tickLocked() time.Time {
	now := s.nowLocked()
	s.expireDueLocked(now)
	return now
}

// movePaymentLocked moves p by event through the ledger's rule
// (ledger.ChangePayment: the payment state machine, the credit, the
// saves), then tells the autopilot and queues the webhook: the one way a
// payment changes status, so the same-amount counter, the credit and the
// webhook can never be forgotten. A refusal changes nothing.
func (s *Service) movePaymentLocked(p *payment, event ledger.PaymentEvent, apply func()) *ledger.Error {
	if lerr := ledger.ChangePayment(s.tx, p, event, apply); lerr != nil {
		return lerr
	}
	s.paymentMovedLocked(p)
	return nil
}

// paymentMovedLocked tells the autopilot and p's receiver that p entered
// its status.
func (s *Service) paymentMovedLocked(p *payment) {
	if s.pilot != nil {
		comment := ""
		if p.Dispute != nil {
			comment = p.Dispute.Comment
		}
		s.pilot.PaymentEntered(s.nowLocked(), p.ID, p.Status, p.Amount, comment)
	}
	s.notifyLocked(hook{Key: "payment:" + p.ID, Resource: "payment", ID: p.ID, Status: p.Status, At: s.nowLocked()},
		p.Merchant, p.NotifyURL, p.Token, api.PaymentView(p))
}

// CreatePayment creates a payment from a request the API checked field by
// field: what needs the state (a repeated ext_id, a bank and a terminal to
// offer, the same-amount limit) is the ledger's rule, in one section.
func (s *Service) CreatePayment(key string, in api.NewPayment) (_ payment, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	now := s.tickLocked()
	p, lerr := ledger.CreatePayment(s.tx, s.tx.Merchant(key), in, ledger.Env{
		Now: now, TTL: s.cfg.PaymentTTL, USDTRate: s.cfg.USDTRate, LocalRates: s.cfg.LocalRates, Banks: s.cfg.Banks,
		MaxSamePending: s.cfg.MaxSamePendingAmount, Refuse: s.refuse,
	})
	if lerr != nil {
		return payment{}, lerr
	}
	s.armExpiryLocked(now)
	if s.pilot != nil { // with the autopilot off, a create runs no code of it
		s.pilot.PaymentCreated(now, p.ID, in.Amount)
	}
	return paymentCopy(p), nil
}

// lookupPayment finds a payment of m by id; another merchant's payment is
// not found, exactly like a missing one.
func (s *Service) lookupPayment(m *merchant, id string) (*payment, *ledger.Error) {
	p := s.tx.Payment(id)
	if p == nil || m == nil || p.Merchant == nil || p.Merchant.APIKey != m.APIKey {
		return nil, paymentNotFound
	}
	return p, nil
}

// paymentNotFound is PAY_006.
var paymentNotFound = &ledger.Error{Kind: ledger.NotFound, Code: spec.CodePAY006, Message: "payment not found"}

// paymentCopy is p as the API may keep it: its own copy of the dispute,
// and no way back to the live merchant or terminal.
func paymentCopy(p *payment) payment {
	c := p.Copy()
	c.Merchant, c.Terminal = nil, nil
	return c
}

// Payment is the merchant's payment id, expiry applied.
func (s *Service) Payment(key, id string) (payment, *ledger.Error) {
	return s.changePayment(key, id, func(*payment) *ledger.Error { return nil })
}

// PaymentByExtID is the merchant's payment by its ext_id.
func (s *Service) PaymentByExtID(key, extID string) (_ payment, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	s.tickLocked()
	m := s.tx.Merchant(key)
	if m == nil {
		return payment{}, paymentNotFound
	}
	p := s.tx.PaymentByExt(m, extID)
	if p == nil {
		return payment{}, paymentNotFound
	}
	return paymentCopy(p), nil
}

// changePayment runs change on the merchant's payment id in one section
// (expiry applied first) and returns the payment as it left it.
func (s *Service) changePayment(key, id string, change func(*payment) *ledger.Error) (_ payment, lerr *ledger.Error) {
	s.begin()
	defer s.endInto(&lerr)
	s.tickLocked()
	p, lerr := s.lookupPayment(s.tx.Merchant(key), id)
	if lerr != nil {
		return payment{}, lerr
	}
	if lerr := change(p); lerr != nil {
		return payment{}, lerr
	}
	return paymentCopy(p), nil
}

// ConfirmPayment is the API's confirm, with the receipt's size.
func (s *Service) ConfirmPayment(key, id string, receipt int) (payment, *ledger.Error) {
	return s.changePayment(key, id, func(p *payment) *ledger.Error { return s.confirmLocked(p, receipt) })
}

// CancelPayment cancels a PENDING payment.
func (s *Service) CancelPayment(key, id string) (payment, *ledger.Error) {
	return s.changePayment(key, id, func(p *payment) *ledger.Error {
		return s.movePaymentLocked(p, ledger.Cancel, nil)
	})
}

// OpenDispute opens d, dated now, on a cancelled payment.
func (s *Service) OpenDispute(key, id string, d dispute) (payment, *ledger.Error) {
	return s.changePayment(key, id, func(p *payment) *ledger.Error {
		d.CreatedAt = s.nowLocked().Truncate(time.Second)
		return s.movePaymentLocked(p, ledger.OpenDispute, func() { p.Dispute = &d })
	})
}

// CancelDispute withdraws an open dispute.
func (s *Service) CancelDispute(key, id string) (payment, *ledger.Error) {
	return s.changePayment(key, id, func(p *payment) *ledger.Error {
		return s.movePaymentLocked(p, ledger.CancelDispute, nil)
	})
}

// confirmLocked is the payer's "I paid" (the API's confirm, the payer
// page), keeping the size of the receipt sent with it.
func (s *Service) confirmLocked(p *payment, receipt int) *ledger.Error {
	return s.movePaymentLocked(p, ledger.Confirm, func() { p.Receipt = receipt })
}

// VerifyPayment plays the service's verification of a PROCESSING payment
// (see sandbox.Server.VerifyPayment) and returns the payment's view.
func (s *Service) VerifyPayment(id, outcome string) (any, error) {
	event, lerr := ledger.VerifyEvent(outcome)
	return s.controlPayment(id, event, lerr)
}

// ReviewDispute plays the review of an open dispute (see
// sandbox.Server.ReviewDispute) and returns the payment's view.
func (s *Service) ReviewDispute(id, outcome string) (any, error) {
	event, lerr := ledger.ReviewEvent(outcome)
	return s.controlPayment(id, event, lerr)
}

// controlPayment moves payment id by a control's event (or refuses the
// control's bad outcome, outcomeErr), in the controls' error form.
func (s *Service) controlPayment(id string, event ledger.PaymentEvent, outcomeErr *ledger.Error) (_ any, err error) {
	s.begin()
	defer s.endErr(&err)
	s.tickLocked()
	if outcomeErr != nil {
		return nil, controlError(outcomeErr)
	}
	p := s.tx.Payment(id)
	if p == nil {
		return nil, notFound("payment", id)
	}
	if lerr := s.movePaymentLocked(p, event, nil); lerr != nil {
		return nil, controlError(lerr)
	}
	v := api.PaymentView(p)
	return &v, nil
}
