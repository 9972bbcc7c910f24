package service

import (
	"strings"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/web"
)

// PayPage reads the payment page of payment id; false if there is none.
func (s *Service) PayPage(id string) (web.PayData, bool) {
	s.begin()
	now := s.tickLocked()
	p := s.tx.Payment(id)
	if p == nil {
		s.commit()
		return web.PayData{}, false
	}
	d := web.PayData{Merchant: p.Merchant.Name, ExtID: p.ExtID, Amount: ledger.Scaled(p.Amount, 2), Status: p.Status,
		StatusClass: "st st-" + strings.ToLower(p.Status), Method: web.MethodText(p.Method),
		AmountText: web.MoneyText(p.Amount, "RUB"), AmountRUBText: web.MoneyText(p.Amount, "RUB"),
		ReqLabel: "Card number", ReqValue: p.ReqValue, BankName: p.Bank.Name, Holder: p.Holder,
		Pending: p.Status == statusPending, Action: "/pay/" + p.ID, Token: web.PageToken(p.ID)}
	d.AmountCopy = d.Amount
	d.PayBy, d.TimeLeft = web.PayBy(p.ValidUntil, now)
	if p.ReqType != "card" {
		d.ReqLabel = "Phone number"
	}
	d.ReqLabelLower = strings.ToLower(d.ReqLabel)
	if p.Method == spec.MethodCrossBorder {
		// The payer sends the local currency: that is the amount to show
		// big and to copy; the RUB figure is what it is worth.
		d.AmountLocal, d.Currency = ledger.Scaled(p.AmountLocal, 2), p.Currency
		d.AmountText, d.AmountCopy = web.MoneyText(p.AmountLocal, p.Currency), d.AmountLocal
	}
	s.commit()
	return d, true
}

// PayerPaid is the payer pressing "I paid": the page's button, or the
// autopilot for a test amount. A PENDING payment becomes PROCESSING as by
// POST /v1/payments/{id}/confirm without a receipt; any other status is
// left alone. ErrNotFound for an unknown id.
func (s *Service) PayerPaid(id string) error {
	return s.payerPress(id)
}

func (s *Service) payerPress(id string) (err error) {
	s.begin()
	defer s.endErr(&err)
	s.tickLocked()
	p := s.tx.Payment(id)
	if p == nil {
		return notFound("payment", id)
	}
	if p.Status == statusPending {
		s.confirmLocked(p, 0)
	}
	return nil
}
